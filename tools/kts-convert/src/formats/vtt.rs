//! WebVTT subtitles and transcripts.
//!
//! The text after `WEBVTT` on the first line (`WEBVTT - Team sync`) is the
//! title.
//! Cue text comes in file order: consecutive cues of one speaker (a
//! `<v Name>` voice tag) form one paragraph that starts with the speaker's
//! name and the first cue's start time, `**Name** (00:00:11): ...`. Nothing
//! is merged away: a cue repeated in the file is repeated in the Markdown.
//! NOTE, STYLE and REGION blocks are not text; a block without a timing
//! line is left out with a warning. `<i>` and `<b>` become emphasis; other
//! tags, inline timestamps and ruby annotations are dropped.

use kts_record::ErrorCode;
use serde_json::{Map, Value};

use super::{ConvertError, Converted, text};

/// One cue's speaker, start time and text.
struct Cue {
    speaker: Option<String>,
    start: Option<String>,
    text: String,
}

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let decoded = text::decode(bytes)?;
    let source = decoded.text.trim_start_matches('\u{feff}');
    let header = source.lines().next().unwrap_or_default();
    let signature = header.strip_prefix("WEBVTT");
    if !signature.is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return Err(ConvertError::corrupt(
            "not a WebVTT file: the first line is not WEBVTT",
        ));
    }
    let mut cues = Vec::new();
    let mut warnings = Vec::new();
    for (index, block) in blocks(source).into_iter().enumerate().skip(1) {
        let first = block.first().copied().unwrap_or_default();
        if ["NOTE", "STYLE", "REGION"].iter().any(|kind| {
            first == *kind
                || first.starts_with(&format!("{kind} "))
                || first.starts_with(&format!("{kind}\t"))
        }) {
            continue;
        }
        let Some(timing) = block.iter().position(|line| line.contains("-->")) else {
            warnings.push(format!(
                "block {} has no timing line (\"-->\"): left out: {}",
                index + 1,
                block.join(" ")
            ));
            continue;
        };
        let start = block[timing]
            .split("-->")
            .next()
            .map(str::trim)
            .filter(|t| is_timestamp(t))
            .map(str::to_owned);
        if start.is_none() {
            warnings.push(format!(
                "cue at block {} has a malformed timing line: {}",
                index + 1,
                block[timing]
            ));
        }
        let (speaker, text) = payload(&block[timing + 1..].join("\n"));
        if !text.is_empty() {
            cues.push(Cue {
                speaker,
                start,
                text,
            });
        }
    }
    if cues.is_empty() {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            if warnings.is_empty() {
                "the WebVTT file holds no cue text".to_owned()
            } else {
                format!("no readable cue: {}", warnings.join("; "))
            },
        ));
    }
    let mut properties = Map::new();
    properties.insert("cues".into(), Value::from(cues.len()));
    let mut speakers: Vec<&str> = Vec::new();
    for speaker in cues.iter().filter_map(|c| c.speaker.as_deref()) {
        if !speakers.contains(&speaker) {
            speakers.push(speaker);
        }
    }
    if !speakers.is_empty() {
        properties.insert("speakers".into(), Value::from(speakers.join(", ")));
    }
    if !warnings.is_empty() {
        properties.insert("warnings".into(), Value::from(warnings));
    }
    decoded.note(&mut properties);
    Ok(Converted {
        markdown: paragraphs(&cues),
        title: signature.and_then(header_title),
        properties,
    })
}

/// The text after `WEBVTT` on the first line, without the separator
/// before it (`- Team sync`).
fn header_title(after_signature: &str) -> Option<String> {
    let title = after_signature
        .trim()
        .trim_start_matches(['-', '\u{2013}', '\u{2014}', ':'])
        .trim();
    (!title.is_empty()).then(|| title.to_owned())
}

/// The file's blocks: runs of non-blank lines.
fn blocks(source: &str) -> Vec<Vec<&str>> {
    let mut blocks = vec![Vec::new()];
    for line in source.lines() {
        if line.trim().is_empty() {
            if blocks.last().is_some_and(|b| !b.is_empty()) {
                blocks.push(Vec::new());
            }
        } else if let Some(block) = blocks.last_mut() {
            block.push(line);
        }
    }
    blocks.retain(|b| !b.is_empty());
    blocks
}

/// `hh:mm:ss.ttt` or `mm:ss.ttt`.
fn is_timestamp(text: &str) -> bool {
    let Some((clock, millis)) = text.split_once('.') else {
        return false;
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let digits = |s: &str, n: usize| s.len() >= n && s.bytes().all(|b| b.is_ascii_digit());
    millis.len() == 3
        && digits(millis, 3)
        && matches!(parts.len(), 2 | 3)
        && parts.iter().all(|p| digits(p, 2))
}

/// Consecutive cues of one speaker as one paragraph.
fn paragraphs(cues: &[Cue]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut previous: Option<Option<&str>> = None;
    for cue in cues {
        let speaker = cue.speaker.as_deref();
        let text = cue.text.replace('\n', " ");
        if previous == Some(speaker)
            && let Some(last) = out.last_mut()
        {
            last.push(' ');
            last.push_str(&text);
            continue;
        }
        let time = cue.start.as_deref().map(|t| format!("({t})"));
        let lead = match (speaker, time) {
            (Some(name), Some(time)) => format!("**{name}** {time}: "),
            (Some(name), None) => format!("**{name}**: "),
            (None, Some(time)) => format!("{time} "),
            (None, None) => String::new(),
        };
        out.push(format!("{lead}{text}"));
        previous = Some(speaker);
    }
    out.join("\n\n") + "\n"
}

/// A cue's speaker (its first voice tag) and its text, tags resolved.
fn payload(raw: &str) -> (Option<String>, String) {
    let mut speaker = None;
    let mut text = String::new();
    let mut rest = raw;
    let mut in_ruby_text = false;
    while let Some(open) = rest.find('<') {
        if !in_ruby_text {
            text.push_str(&unescape(&rest[..open]));
        }
        let Some(close) = rest[open..].find('>') else {
            // A stray '<' is text.
            text.push_str(&unescape(&rest[open..]));
            rest = "";
            break;
        };
        let tag = &rest[open + 1..open + close];
        rest = &rest[open + close + 1..];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        match (tag.starts_with('/'), name.as_str()) {
            (false, "v") => {
                let name = tag.split_once([' ', '\t']).map(|(_, n)| n.trim());
                if speaker.is_none() {
                    speaker = name.filter(|n| !n.is_empty()).map(unescape);
                }
            }
            (_, "i") => text.push('*'),
            (_, "b") => text.push_str("**"),
            (false, "rt") => in_ruby_text = true,
            (true, "rt") => in_ruby_text = false,
            _ => {}
        }
    }
    if !in_ruby_text {
        text.push_str(&unescape(rest));
    }
    let text = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    // Emphasis around nothing.
    let text = if text.chars().all(|c| c == '*') {
        String::new()
    } else {
        text
    };
    (speaker, text)
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&lrm;", "\u{200e}")
        .replace("&rlm;", "\u{200f}")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markdown(source: &str) -> String {
        convert(source.as_bytes()).unwrap().markdown
    }

    #[test]
    fn cues_of_one_speaker_form_a_paragraph() {
        let source = "WEBVTT\n\nNOTE a comment\nover two lines\n\n1\n00:00:04.963 --> 00:00:08.571\n<v Speaker A>OK,\nI think</v>\n\n00:00:08.571 --> 00:00:09.403\n<v Speaker A>properly.</v>\n\n00:10.683 --> 00:11.563\n<v.loud Speaker B>Good &amp; <i>fine</i>.\n\n00:12.000 --> 00:13.000\nNo voice.\n";
        assert_eq!(
            markdown(source),
            "**Speaker A** (00:00:04.963): OK, I think properly.\n\n**Speaker B** (00:10.683): Good & *fine*.\n\n(00:12.000) No voice.\n"
        );
        let converted = convert(source.as_bytes()).unwrap();
        assert_eq!(converted.properties["cues"], 4);
        assert_eq!(converted.properties["speakers"], "Speaker A, Speaker B");
    }

    #[test]
    fn the_text_after_the_signature_is_the_title() {
        let title = |header: &str| {
            let source = format!("{header}\n\n00:01.000 --> 00:02.000\nHi\n");
            convert(source.as_bytes()).unwrap().title
        };
        assert_eq!(title("WEBVTT - Team sync").as_deref(), Some("Team sync"));
        assert_eq!(
            title("WEBVTT\tWeekly review").as_deref(),
            Some("Weekly review")
        );
        assert_eq!(title("WEBVTT"), None);
        assert_eq!(title("WEBVTT -"), None);
    }

    #[test]
    fn repeated_cues_are_kept() {
        let cue = "00:01.000 --> 00:02.000\nAgain\n\n";
        let source = format!("WEBVTT\n\n{cue}{cue}");
        assert_eq!(markdown(&source), "(00:01.000) Again Again\n");
    }

    #[test]
    fn ruby_text_and_inline_timestamps_are_dropped() {
        let source =
            "WEBVTT\n\n00:01.000 --> 00:02.000\n<ruby>漢<rt>かん</rt></ruby>字 <00:01.500>next\n";
        assert_eq!(markdown(source), "(00:01.000) 漢字 next\n");
    }

    #[test]
    fn damaged_files_give_clear_errors_or_warnings() {
        let err = convert(b"00:01.000 --> 00:02.000\nHi\n").unwrap_err();
        assert_eq!(err.code, ErrorCode::Corrupt);
        assert!(err.message.contains("WEBVTT"), "{}", err.message);
        let err = convert(b"WEBVTT\n\nNOTE only a note\n").unwrap_err();
        assert_eq!(err.code, ErrorCode::Empty);
        // A block without its timing line, a broken timestamp, an unclosed tag.
        let source = "WEBVTT\n\nlost text\n\nxx:01 --> 00:02.000\n<v Ann>Half <b\n\n00:03.000 --> 00:04.000\nfine\n";
        let converted = convert(source.as_bytes()).unwrap();
        assert_eq!(converted.markdown, "**Ann**: Half <b\n\n(00:03.000) fine\n");
        let warnings = converted.properties["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].as_str().unwrap().contains("lost text"));
        // Truncated anywhere: never a panic.
        let whole = source.as_bytes();
        for cut in 0..whole.len() {
            let _ = convert(&whole[..cut]);
        }
    }
}
