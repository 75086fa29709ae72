//! The first pass over the source: comments dropped, code set aside.
//!
//! Verbatim environments and `\verb` hold text that is not LaTeX (a `%` in
//! them is no comment), so their text is stored and replaced by a marker
//! that nothing later reads as LaTeX; [`restore`] puts it back into the
//! Markdown, as a code span or a fenced block. URLs keep their `%` and `#` the same way. The
//! `comment` environment and `\iffalse` blocks are dropped.

use super::scan;

/// Code set aside: a `\verb` span or a verbatim environment.
pub struct Code {
    pub text: String,
    /// A block (fenced), with the language it names, or an inline span.
    pub block: Option<String>,
}

pub struct Prepared {
    pub text: String,
    pub code: Vec<Code>,
}

/// The longest `\verb` span looked for: a delimiter further on the line
/// is not taken for its end.
const MAX_VERB_BYTES: usize = 1024;

const MARKER_OPEN: char = '\u{E000}';
const MARKER_CLOSE: char = '\u{E001}';

/// Environments whose content is code.
const VERBATIM: [&str; 8] = [
    "verbatim",
    "verbatim*",
    "Verbatim",
    "BVerbatim",
    "lstlisting",
    "minted",
    "alltt",
    "spverbatim",
];

pub fn prepare(source: &str) -> Prepared {
    let source = source.replace([MARKER_OPEN, MARKER_CLOSE], "\u{FFFD}");
    let bytes = source.as_bytes();
    let mut prepared = Prepared {
        text: String::with_capacity(source.len()),
        code: Vec::new(),
    };
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..]
            .iter()
            .position(|&b| b == b'%' || b == b'\\')
            .map_or(bytes.len(), |offset| i + offset);
        prepared.text.push_str(&source[i..run]);
        i = run;
        if i >= bytes.len() {
            break;
        }
        i = if bytes[i] == b'%' {
            after_comment(&source, i)
        } else {
            prepared.command(&source, i)
        };
    }
    prepared
}

/// The offset after the comment at `i`: TeX drops it with its line break
/// and the next line's leading spaces, unless that line is blank (then the
/// break stays, and the blank line still ends the paragraph).
fn after_comment(text: &str, i: usize) -> usize {
    let Some(line_end) = text[i..].find('\n').map(|offset| i + offset) else {
        return text.len();
    };
    let next = &text[line_end + 1..];
    let next_line = next.split('\n').next().unwrap_or("");
    if next_line.trim().is_empty() {
        line_end
    } else {
        text.len() - next.trim_start_matches([' ', '\t']).len()
    }
}

impl Prepared {
    /// Copies the command at `i`, or sets its code aside; returns the
    /// offset after what was read.
    fn command(&mut self, text: &str, i: usize) -> usize {
        let (name, end) = scan::command(text, i);
        match name {
            "verb" | "lstinline" if !text[end..].starts_with('{') => self.verb(text, i, end),
            "begin" => self.begin(text, i, end),
            "url" | "href" | "nolinkurl" if text[end..].starts_with('{') => {
                let (_, after) = scan::group(text, end);
                self.text.push_str(&text[i..after]);
                after
            }
            "iffalse" => after_line_end(text, skip_conditional(text, end)),
            // Package code, not text.
            "makeatletter" => after_command(text, end, "\\makeatother"),
            "ExplSyntaxOn" => after_command(text, end, "\\ExplSyntaxOff"),
            _ => {
                self.text.push_str(&text[i..end]);
                end
            }
        }
    }

    /// `\verb|code|` (or `\verb*`): the code, set aside as a span.
    fn verb(&mut self, text: &str, i: usize, end: usize) -> usize {
        let start = if text[end..].starts_with('*') {
            end + 1
        } else {
            end
        };
        let Some(delimiter) = text[start..].chars().next().filter(|c| !c.is_whitespace()) else {
            self.text.push_str(&text[i..end]);
            return end;
        };
        let body_start = start + delimiter.len_utf8();
        let window = scan::prefix(&text[body_start..], MAX_VERB_BYTES);
        let line = window.split('\n').next().unwrap_or("");
        let Some(length) = line.find(delimiter) else {
            self.text.push_str(&text[i..end]);
            return end;
        };
        let marker = self.set_aside(text[body_start..body_start + length].to_string(), None);
        self.text.push_str(&marker);
        body_start + length + delimiter.len_utf8()
    }

    /// `\begin{name}`: a verbatim environment is set aside, a `comment`
    /// environment dropped, any other copied.
    fn begin(&mut self, text: &str, i: usize, end: usize) -> usize {
        let (name, after_name) = scan::argument_text(text, end);
        let name = name.trim();
        if name == "comment" {
            return scan::environment_end(text, name, after_name).1;
        }
        if !VERBATIM.contains(&name) {
            self.text.push_str(&text[i..after_name]);
            return after_name;
        }
        let (language, body_start) = code_language(text, name, after_name);
        let close = format!("\\end{{{name}}}");
        let (body_end, after) = match text[body_start..].find(&close) {
            Some(offset) => (body_start + offset, body_start + offset + close.len()),
            None => (text.len(), text.len()),
        };
        let body = text[body_start..body_end]
            .trim_start_matches([' ', '\t', '\r'])
            .strip_prefix('\n')
            .unwrap_or(&text[body_start..body_end])
            .trim_end();
        let marker = self.set_aside(body.to_string(), Some(language));
        self.text.push_str(&format!("\n\n{marker}\n\n"));
        after
    }

    fn set_aside(&mut self, text: String, block: Option<String>) -> String {
        self.code.push(Code { text, block });
        format!("{MARKER_OPEN}{}{MARKER_CLOSE}", self.code.len() - 1)
    }
}

/// The language a code environment names (`[language=Python]`, minted's
/// `{python}`), and the offset where its code starts.
fn code_language(text: &str, name: &str, mut i: usize) -> (String, usize) {
    let mut language = String::new();
    while let Some((options, after)) = scan::optional(text, i, false) {
        if let Some(value) = text[options]
            .split(',')
            .filter_map(|option| option.split_once('='))
            .find(|(key, _)| key.trim() == "language")
            .map(|(_, value)| value.trim())
        {
            language = value.trim_matches(['{', '}']).to_string();
        }
        i = after;
    }
    if name == "minted"
        && let Some((range, after)) = scan::argument(text, i)
    {
        language = text[range].trim().to_string();
        i = after;
    }
    let clean = language
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "+-#_".contains(c));
    (
        if clean {
            language.to_lowercase()
        } else {
            String::new()
        },
        i,
    )
}

/// The offset after the spaces and the line break that end a line at `i`,
/// as TeX skips them after a command.
fn after_line_end(text: &str, i: usize) -> usize {
    let rest = text[i..].trim_start_matches([' ', '\t', '\r']);
    let rest = rest.strip_prefix('\n').unwrap_or(rest);
    text.len() - rest.len()
}

/// The offset after the next `command` from `from`; `from` when there is
/// none (a region left open is not worth the rest of the document).
fn after_command(text: &str, from: usize, command: &str) -> usize {
    text[from..]
        .find(command)
        .map_or(from, |offset| from + offset + command.len())
}

/// The offset after the `\fi` that closes an `\iffalse` whose name ends at
/// `from`, counting the conditionals nested in it.
fn skip_conditional(text: &str, from: usize) -> usize {
    let mut depth = 0usize;
    let mut i = from;
    while let Some(offset) = text[i..].find('\\') {
        let (name, end) = scan::command(text, i + offset);
        match name {
            "fi" if depth == 0 => return end,
            "fi" => depth -= 1,
            "iff" | "ifthenelse" => {}
            _ if name.starts_with("if") => depth += 1,
            _ => {}
        }
        i = end;
    }
    text.len()
}

/// Puts the code set aside back into converted text: spans as Markdown code
/// spans, blocks fenced.
pub fn restore(text: &str, code: &[Code]) -> String {
    if !text.contains(MARKER_OPEN) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find(MARKER_OPEN) {
        out.push_str(&rest[..open]);
        let after_open = &rest[open + MARKER_OPEN.len_utf8()..];
        let Some(close) = after_open.find(MARKER_CLOSE) else {
            rest = after_open;
            continue;
        };
        if let Some(code) = after_open[..close]
            .parse::<usize>()
            .ok()
            .and_then(|n| code.get(n))
        {
            out.push_str(&render(code));
        }
        rest = &after_open[close + MARKER_CLOSE.len_utf8()..];
    }
    out.push_str(rest);
    out
}

fn render(code: &Code) -> String {
    let longest_run = |tick: char| {
        code.text
            .split(|c| c != tick)
            .map(str::len)
            .max()
            .unwrap_or(0)
    };
    match &code.block {
        Some(language) => {
            let fence = "`".repeat(3.max(longest_run('`') + 1));
            format!("{fence}{language}\n{}\n{fence}", code.text)
        }
        None => {
            let ticks = "`".repeat(longest_run('`') + 1);
            let pad = if code.text.starts_with('`') || code.text.ends_with('`') {
                " "
            } else {
                ""
            };
            format!("{ticks}{pad}{}{pad}{ticks}", code.text)
        }
    }
}
