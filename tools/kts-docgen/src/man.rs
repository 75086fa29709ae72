//! `man/<tool>.1`: clap_mangen's NAME, SYNOPSIS, DESCRIPTION, OPTIONS and
//! VERSION, with the after-help text split into more DESCRIPTION and EXAMPLES,
//! and EXIT STATUS, DIAGNOSTICS and SEE ALSO added.

use std::path::Path;

use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, roman};
use kts_record::ErrorCode;

use crate::{Generated, Rejects, TOOLS, Tool};

pub(crate) fn file(tool: &Tool) -> anyhow::Result<Generated> {
    Ok(Generated {
        path: Path::new("man").join(format!("{}.1", tool.name)),
        contents: page(tool)?,
    })
}

fn page(tool: &Tool) -> anyhow::Result<String> {
    let command = (tool.command)();
    let after_help = AfterHelp::parse(
        &command
            .get_after_help()
            .map(ToString::to_string)
            .unwrap_or_default(),
    );
    let man = Man::new(command);

    let mut extra = Roff::new();
    description(&mut extra, &after_help.prose);
    let mut tail = Roff::new();
    exit_status(&mut tail, tool);
    diagnostics(&mut tail, tool);
    examples(&mut tail, &after_help.examples);
    see_also(&mut tail, tool);

    let mut page = Page::default();
    page.section(|w| man.render_title(w))?;
    page.section(|w| man.render_name_section(w))?;
    page.section(|w| man.render_synopsis_section(w))?;
    page.section(|w| man.render_description_section(w))?;
    page.section(|w| extra.to_writer(w))?;
    page.section(|w| man.render_options_section(w))?;
    page.section(|w| tail.to_writer(w))?;
    page.section(|w| man.render_version_section(w))?;
    Ok(page.text)
}

/// A man page put together from separately rendered parts. Each render call
/// starts with the same roff preamble; it is kept once, at the top.
#[derive(Default)]
struct Page {
    text: String,
}

impl Page {
    fn section(
        &mut self,
        render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let mut bytes = Vec::new();
        render(&mut bytes)?;
        let rendered = String::from_utf8(bytes)?;
        let preamble = Roff::new().render();
        let body = match self.text.is_empty() {
            true => &rendered[..],
            false => rendered.strip_prefix(&preamble).unwrap_or(&rendered),
        };
        self.text.push_str(body);
        Ok(())
    }
}

/// A command's after-help text: paragraphs of prose, and the lines of the
/// paragraph headed `Example:` (or `Examples:`).
#[derive(Debug, Default, PartialEq)]
struct AfterHelp {
    prose: Vec<String>,
    examples: Vec<String>,
}

impl AfterHelp {
    fn parse(text: &str) -> AfterHelp {
        let mut parsed = AfterHelp::default();
        for paragraph in text.split("\n\n") {
            let mut lines = paragraph.lines().map(str::trim).filter(|l| !l.is_empty());
            match lines.next() {
                None => {}
                Some("Example:" | "Examples:") => parsed.examples.extend(lines.map(String::from)),
                Some(first) => parsed.prose.push(
                    std::iter::once(first)
                        .chain(lines)
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            }
        }
        parsed
    }
}

fn description(roff: &mut Roff, prose: &[String]) {
    for paragraph in prose {
        roff.control("PP", []).text([roman(paragraph)]);
    }
}

fn exit_status(roff: &mut Roff, tool: &Tool) {
    roff.control("SH", ["EXIT STATUS"]);
    let all_done = match tool.rejects {
        Rejects::Nothing => "Success.",
        Rejects::ReportedAndSkipped => "Every input was processed.",
        _ => "Every record was processed.",
    };
    term(roff, "0", all_done);
    let rejected = match tool.rejects {
        Rejects::ReportedAndForwarded => Some(format!(
            "Some records were rejected. Each is reported on stderr as \
             \"{}: error (at WHERE): CODE: MESSAGE\" and sent downstream as a \
             kts.error/1 record; the stream goes on.",
            tool.name
        )),
        Rejects::ReportedAndSkipped => Some(format!(
            "Some inputs could not be processed. Each is reported on stderr as \
             \"{}: error (at WHERE): CODE: MESSAGE\" and skipped; the others are processed.",
            tool.name
        )),
        Rejects::Nothing => None,
    };
    if let Some(rejected) = rejected {
        term(roff, "1", &rejected);
    }
    term(roff, "2", "A fatal or usage error, reported on stderr.");
    if tool.rejects != Rejects::Nothing {
        roff.control("PP", []).text([roman(
            "When the reader of the output goes away (a broken pipe, as in \
             \"| head\"), the tool stops quietly and exits 0.",
        )]);
    }
}

fn diagnostics(roff: &mut Roff, tool: &Tool) {
    if tool.rejects == Rejects::Nothing {
        return;
    }
    roff.control("SH", ["DIAGNOSTICS"]);
    roff.text([roman(
        "The CODE of an error message, and the code field of a kts.error/1 record, is one of:",
    )]);
    for code in ErrorCode::ALL {
        term(roff, code.as_str(), code.description());
    }
}

fn examples(roff: &mut Roff, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    roff.control("SH", ["EXAMPLES"]);
    roff.control("RS", ["4"]).control("nf", []);
    for line in lines {
        roff.text([roman(line)]);
    }
    roff.control("fi", []).control("RE", []);
}

fn see_also(roff: &mut Roff, tool: &Tool) {
    let others: Vec<String> = TOOLS
        .iter()
        .filter(|other| other.name != tool.name)
        .map(|other| format!("{}(1)", other.name))
        .collect();
    roff.control("SH", ["SEE ALSO"]);
    roff.text([roman(others.join(", "))]);
}

/// A tagged paragraph: the term in bold, then its description.
fn term(roff: &mut Roff, name: &str, description: &str) {
    roff.control("TP", [])
        .text([bold(name)])
        .text([roman(description)]);
}

#[cfg(test)]
mod tests {
    use super::AfterHelp;

    #[test]
    fn after_help_splits_into_prose_and_examples() {
        let parsed = AfterHelp::parse("One\ntwo.\n\nExample:\n  a | b\n  c\n\nThree.");
        assert_eq!(parsed.prose, ["One two.", "Three."]);
        assert_eq!(parsed.examples, ["a | b", "c"]);
    }
}
