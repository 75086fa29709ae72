//! What kts-convert says about a document besides its Markdown: id, title,
//! doc_type, dates and keywords.

use std::collections::{BTreeSet, HashMap};
use std::sync::LazyLock;

use kts_record::function_words::is_function_word;
use kts_record::{DocRecord, FileRecord, Format, ImageRef, schema_id};
use regex::Regex;
use serde_json::Value;

use crate::formats::{self, Converted};
use crate::images::{Image, media_type};

/// Builds the `kts.doc/1` record of a converted file.
pub fn describe(
    file: &FileRecord,
    doc_id: &str,
    format: Format,
    converted: Converted,
    images: &[Image],
) -> DocRecord {
    let Converted {
        markdown,
        title,
        mut properties,
    } = converted;
    let markdown = without_soft_hyphens(markdown);
    let title = title.map(without_soft_hyphens);
    // A workbook's headings and first cells are its sheets' names and data; a
    // message's are kts's own list of its headers and of its attachments.
    let titled_by_content = !matches!(
        format,
        Format::Xlsx | Format::Xls | Format::Ods | Format::Eml | Format::Msg | Format::Mbox
    );
    let title = choose_title(title.as_deref(), &markdown, &file.path, titled_by_content);
    let doc_type = classify(&title, &file.path, &markdown);
    properties.insert("source_sha256".into(), file.sha256.clone().into());
    properties.insert("size".into(), file.size.into());
    properties.insert("mtime".into(), file.mtime.clone().into());
    properties.insert(
        "dates".into(),
        dates(&markdown).into_iter().map(Value::from).collect(),
    );
    properties.insert(
        "keywords".into(),
        keywords(&title, formats::keyword_text(format, &markdown))
            .into_iter()
            .map(Value::from)
            .collect(),
    );
    let images = images
        .iter()
        .map(|image| ImageRef {
            path: format!(".kts/documents/{doc_id}/images/{}", image.file_name()),
            sha256: image.sha256.clone(),
            media_type: media_type(&image.extension).into(),
        })
        .collect();
    DocRecord {
        schema: schema_id::DOC.into(),
        doc_id: doc_id.into(),
        path: file.path.clone(),
        root: file.root.clone(),
        title,
        doc_type: doc_type.into(),
        format,
        markdown,
        images,
        metadata: properties,
        chunks: None,
    }
}

/// Drops soft hyphens (U+00AD): invisible hints where a word may break,
/// they would split it for search (`docu&shy;mentation`).
fn without_soft_hyphens(text: String) -> String {
    if text.contains('\u{AD}') {
        text.replace('\u{AD}', "")
    } else {
        text
    }
}

/// The document's own title when it is a real one, else (when the content
/// may give one) its first heading or a title-like first line, else its
/// file name.
fn choose_title(
    property: Option<&str>,
    markdown: &str,
    path: &str,
    titled_by_content: bool,
) -> String {
    let placeholder = |t: &str| {
        let t = t.trim().to_ascii_lowercase();
        t.is_empty()
            || t == "untitled"
            || t.starts_with("microsoft word - ")
            || t == "powerpoint presentation"
            || t == "slide 1"
            || t == "document"
            || t.strip_prefix("sheet")
                .is_some_and(|n| n.trim().parse::<u32>().is_ok())
    };
    if let Some(title) = property.filter(|t| !placeholder(t)) {
        return collapse_whitespace(title);
    }
    if !titled_by_content {
        return file_name_title(path);
    }
    if let Some(heading) = first_heading(markdown).filter(|h| !placeholder(h)) {
        return match is_section_name(&heading) {
            true => file_name_title(path),
            false => heading,
        };
    }
    // A transcript's first line is what someone said, not a title.
    let transcript = path.to_ascii_lowercase().ends_with(".vtt");
    if !transcript && let Some(line) = title_like_first_line(markdown).filter(|l| !placeholder(l)) {
        return line;
    }
    file_name_title(path)
}

/// Whether a heading names a section any document may have ("Summary",
/// "1. Introduction"): when a document starts with one, it has no title of
/// its own and its file name says more.
fn is_section_name(heading: &str) -> bool {
    const SECTION_NAMES: &[&str] = &[
        "summary",
        "executive summary",
        "abstract",
        "introduction",
        "overview",
        "contents",
        "table of contents",
        "preface",
        "foreword",
        "background",
        "motivation",
        "synopsis",
    ];
    let name = heading
        .trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ')
        .trim_end_matches(':')
        .to_lowercase();
    SECTION_NAMES.contains(&name.as_str())
}

/// `incident_report-2024` for `dir/incident_report-2024.pdf`; `box message 3`
/// for `box.mbox#message/3`, the third message of a mailbox.
fn file_name_title(path: &str) -> String {
    if let Some((mailbox, number)) = path.rsplit_once("#message/")
        && !number.contains('/')
    {
        return format!("{} message {number}", file_name_title(mailbox));
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    collapse_whitespace(&stem.replace(['_', '-'], " "))
}

/// The first ATX (`# Title`) or setext (`Title` over `=====`) heading.
fn first_heading(markdown: &str) -> Option<String> {
    let lines: Vec<&str> = markdown.lines().take(500).collect();
    lines.iter().enumerate().find_map(|(i, line)| {
        heading_text(line).or_else(|| {
            let underline = lines.get(i + 1)?.trim();
            let setext = underline.len() >= 3
                && (underline.bytes().all(|b| b == b'=') || underline.bytes().all(|b| b == b'-'));
            (setext && !line.trim().is_empty() && !line.starts_with(['-', '|']))
                .then(|| collapse_whitespace(line))
        })
    })
}

/// A short first line that reads like a title (plain text files often start with one).
fn title_like_first_line(markdown: &str) -> Option<String> {
    const MAX_TITLE_CHARS: usize = 80;
    let mut lines = markdown
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("<!--"));
    let first = lines.next().filter(|l| !l.starts_with('|'))?;
    let more_follows = lines.next().is_some();
    let sentence = first.ends_with(['.', ',', ';', ':']);
    (more_follows
        && !sentence
        && first.chars().count() <= MAX_TITLE_CHARS
        && first.chars().any(char::is_alphabetic))
    .then(|| collapse_whitespace(first.trim_start_matches(['-', '*', '#', '>', ' '])))
}

fn heading_text(line: &str) -> Option<String> {
    let text = line.trim_start_matches('#');
    let level = line.len() - text.len();
    ((1..=6).contains(&level) && text.starts_with(' '))
        .then(|| collapse_whitespace(text.trim_end_matches('#')))
        .filter(|t| !t.is_empty())
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Document types and the words that signal them. A word in the title or path
/// counts most, in a heading less, in the body least.
const DOC_TYPES: &[(&str, &[&str])] = &[
    (
        "TROUBLESHOOT",
        &[
            "troubleshoot",
            "troubleshooting",
            "error",
            "errors",
            "fix",
            "resolve",
            "problem",
            "issue",
            "diagnose",
            "workaround",
            "symptom",
        ],
    ),
    (
        "SOP",
        &[
            "sop",
            "procedure",
            "procedures",
            "runbook",
            "playbook",
            "checklist",
            "operating",
        ],
    ),
    (
        "POLICY",
        &[
            "policy",
            "policies",
            "compliance",
            "retention",
            "governance",
            "shall",
            "prohibited",
            "mandatory",
        ],
    ),
    (
        "GUIDE",
        &[
            "guide",
            "how",
            "tutorial",
            "getting",
            "started",
            "handbook",
            "manual",
            "quickstart",
            "walkthrough",
            "install",
            "setup",
        ],
    ),
    (
        "REFERENCE",
        &[
            "reference",
            "specification",
            "spec",
            "api",
            "glossary",
            "schema",
            "schemas",
            "rfc",
            "definitions",
            "format",
            "record",
            "records",
        ],
    ),
    ("FAQ", &["faq", "faqs", "questions", "frequently"]),
    ("MEETING", &["minutes", "meeting", "agenda", "attendees"]),
    (
        "REPORT",
        &[
            "report",
            "analysis",
            "findings",
            "assessment",
            "review",
            "results",
        ],
    ),
    (
        "AGREEMENT",
        &[
            "agreement",
            "contract",
            "terms",
            "parties",
            "hereby",
            "whereas",
        ],
    ),
    (
        "RELEASE_NOTES",
        &["release", "changelog", "changes", "version"],
    ),
];

/// Picks the doc_type whose signal words weigh most; GENERAL below a threshold.
fn classify(title: &str, path: &str, markdown: &str) -> &'static str {
    const TITLE_WEIGHT: u32 = 6;
    const HEADING_WEIGHT: u32 = 2;
    // Body words are many and vague: each counts once, and only up to a cap.
    const BODY_CAP: u32 = 6;
    const THRESHOLD: u32 = 6;
    let count = |text: &str, counts: &mut HashMap<String, u32>| {
        for word in words(text) {
            *counts.entry(word).or_default() += 1;
        }
    };
    let (mut named, mut headed, mut body) = (HashMap::new(), HashMap::new(), HashMap::new());
    count(&format!("{title} {path}"), &mut named);
    for heading in markdown.lines().take(5000).filter_map(heading_text) {
        count(&heading, &mut headed);
    }
    count(
        &markdown.chars().take(20_000).collect::<String>(),
        &mut body,
    );
    let weight = |word: &str| {
        let get = |counts: &HashMap<String, u32>| counts.get(word).copied().unwrap_or(0);
        get(&named).min(1) * TITLE_WEIGHT
            + get(&headed).min(3) * HEADING_WEIGHT
            + get(&body).min(BODY_CAP)
    };
    let mut best = ("GENERAL", THRESHOLD - 1);
    for (doc_type, signals) in DOC_TYPES {
        let score: u32 = signals.iter().map(|s| weight(s)).sum();
        if score > best.1 {
            best = (doc_type, score);
        }
    }
    best.0
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

static ISO_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b((?:19|20)\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b").expect("valid regex")
});
static DAY_MONTH_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?,?\s+((?:19|20)\d{2})\b")
        .expect("valid regex")
});
static MONTH_DAY_YEAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{2})\b")
        .expect("valid regex")
});

const MAX_DATES: usize = 50;

/// Dates written in the text, as ISO `YYYY-MM-DD`, sorted and unique.
fn dates(markdown: &str) -> Vec<String> {
    let mut found = BTreeSet::new();
    for c in ISO_DATE.captures_iter(markdown) {
        found.insert(format!("{}-{}-{}", &c[1], &c[2], &c[3]));
    }
    let mut add = |day: &str, month: &str, year: &str| {
        let (Ok(day), Some(month)) = (day.parse::<u32>(), month_number(month)) else {
            return;
        };
        if (1..=31).contains(&day) {
            found.insert(format!("{year}-{month:02}-{day:02}"));
        }
    };
    for c in DAY_MONTH_YEAR.captures_iter(markdown) {
        add(&c[1], &c[2], &c[3]);
    }
    for c in MONTH_DAY_YEAR.captures_iter(markdown) {
        add(&c[2], &c[1], &c[3]);
    }
    found.into_iter().take(MAX_DATES).collect()
}

fn month_number(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let prefix = name.get(..3)?.to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| *m == prefix)
        .map(|i| i as u32 + 1)
}

const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "also",
    "among",
    "and",
    "any",
    "are",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "can",
    "cannot",
    "could",
    "did",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "either",
    "else",
    "etc",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "however",
    "into",
    "its",
    "itself",
    "just",
    "many",
    "may",
    "might",
    "more",
    "most",
    "much",
    "must",
    "not",
    "now",
    "off",
    "once",
    "one",
    "only",
    "other",
    "otherwise",
    "our",
    "ours",
    "out",
    "over",
    "own",
    "page",
    "per",
    "same",
    "see",
    "shall",
    "she",
    "should",
    "since",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "though",
    "through",
    "thus",
    "too",
    "two",
    "under",
    "until",
    "upon",
    "use",
    "used",
    "uses",
    "using",
    "very",
    "via",
    "was",
    "way",
    "were",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "image",
    "images",
    "slide",
    "notes",
    "http",
    "https",
    "www",
];

const MAX_KEYWORDS: usize = 10;

/// The most frequent meaningful words (not English stopwords nor other
/// languages' function words), title words counting extra.
fn keywords(title: &str, markdown: &str) -> Vec<String> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    let meaningful = |w: &String| {
        w.chars().count() >= 3
            && !w.chars().all(|c| c.is_ascii_digit())
            && !STOPWORDS.contains(&w.as_str())
            && !is_function_word(w)
    };
    for word in words(markdown).filter(meaningful) {
        *counts.entry(word).or_default() += 1;
    }
    for word in words(title).filter(meaningful) {
        *counts.entry(word).or_default() += 3;
    }
    let mut ranked: Vec<(String, usize)> = counts.into_iter().filter(|(_, n)| *n >= 2).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
        .into_iter()
        .take(MAX_KEYWORDS)
        .map(|(w, _)| w)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_prefers_real_properties_then_headings_then_the_file_name() {
        assert_eq!(
            choose_title(Some("  Leave  Policy "), "# Other", "a.docx", true),
            "Leave Policy"
        );
        assert_eq!(
            choose_title(
                Some("PowerPoint Presentation"),
                "text\n## Quarterly Review\n",
                "a.pptx",
                true
            ),
            "Quarterly Review"
        );
        assert_eq!(
            choose_title(
                None,
                "- Start: 2024\n\n## Summary\n\nText.",
                "0001-private-fields.md",
                true
            ),
            "0001 private fields"
        );
        assert_eq!(
            choose_title(
                None,
                "# 1. Introduction\n\nText.",
                "docs/vpn_setup.md",
                true
            ),
            "vpn setup"
        );
        assert_eq!(
            choose_title(None, "Leave rules\n===\n\nText.", "a.txt", true),
            "Leave rules"
        );
        assert_eq!(
            choose_title(None, "Leave rules for staff\n\nText.", "a.txt", true),
            "Leave rules for staff"
        );
        assert_eq!(
            choose_title(
                None,
                "One sentence only.",
                "dir/incident_report-2024.pdf",
                true
            ),
            "incident report 2024"
        );
        assert_eq!(
            choose_title(
                None,
                "| Name | City |\n| --- | --- |\n",
                "staff-list.csv",
                true
            ),
            "staff list"
        );
        assert_eq!(
            choose_title(
                None,
                "## Sheet1\n\n| a |\n| --- |\n| 1 |\n",
                "budget.xlsx",
                false
            ),
            "budget"
        );
        let workbook = "## Sheet\n\nQuarterly figures\n\n| a |\n| --- |\n| 1 |\n";
        assert_eq!(
            choose_title(None, workbook, "mail.eml#attachment/q3_sales.xlsx", false),
            "q3 sales"
        );
        assert_eq!(
            choose_title(Some("Sales 2024"), workbook, "q3.ods", false),
            "Sales 2024"
        );
    }

    #[test]
    fn doc_types_follow_the_signal_words() {
        assert_eq!(
            classify(
                "Troubleshooting login errors",
                "kb/login.md",
                "If you see error E-5, fix it."
            ),
            "TROUBLESHOOT"
        );
        assert_eq!(
            classify(
                "Data Retention Policy",
                "policy.pdf",
                "Records shall be kept."
            ),
            "POLICY"
        );
        assert_eq!(
            classify("Getting started", "intro.md", "Install the tool."),
            "GUIDE"
        );
        assert_eq!(classify("Lunch", "lunch.txt", "We ate."), "GENERAL");
    }

    #[test]
    fn dates_in_several_spellings_become_iso() {
        let text = "Signed 2024-03-15, effective 1 April 2024 and reviewed on March 3rd, 2025. Not 2024-13-01.";
        assert_eq!(dates(text), ["2024-03-15", "2024-04-01", "2025-03-03"]);
    }

    #[test]
    fn keywords_skip_stopwords_and_rank_by_frequency() {
        let text = "Retention rules: retention periods and archive rules. The archive is audited; retention matters.";
        assert_eq!(
            keywords("Retention", text)[..3],
            ["retention", "archive", "rules"]
        );
    }

    #[test]
    fn keywords_skip_function_words_of_other_languages() {
        let text = "Die Kündigungsfrist beträgt vier Wochen. Die Kündigung muss schriftlich \
                    erfolgen. Der Arbeitgeber bestätigt die Kündigung innerhalb von einer Woche.";
        assert_eq!(keywords("Kündigung", text), ["kündigung"]);
    }
}
