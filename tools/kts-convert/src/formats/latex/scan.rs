//! Reading LaTeX source by byte offsets: commands, groups, arguments and
//! environments. Every character of LaTeX's syntax is ASCII, so an offset
//! found here is always a char boundary. Nothing here recurses, and a group
//! or environment left open runs to the end of the text (as TeX reads it),
//! so no part of the text is searched twice for the same closing.

use std::ops::Range;

/// How far an optional argument `[...]` is looked for its `]`: further than
/// any option list, so a `[` in running text is not taken for one. The
/// search also stops at the next `[` (options do not nest), so no byte is
/// searched for more than one `]`.
const MAX_OPTIONAL_BYTES: usize = 1024;

/// The command whose backslash is at `i`: its name (its letters, or the one
/// character after the backslash) and the offset after it.
pub fn command(text: &str, i: usize) -> (&str, usize) {
    let bytes = text.as_bytes();
    let start = i + 1;
    let mut end = start;
    while end < bytes.len() && bytes[end].is_ascii_alphabetic() {
        end += 1;
    }
    if end == start {
        end += text[start..].chars().next().map_or(0, char::len_utf8);
    }
    (&text[start..end], end)
}

/// The start of `text`, at most `max` bytes of it.
pub fn prefix(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Whether the command at `i` is `\name` (and not a longer name).
pub fn is_command(text: &str, i: usize, name: &str) -> bool {
    text[i..].starts_with('\\') && command(text, i).0 == name
}

/// The offset after spaces and tabs and at most one line break (a blank
/// line ends a paragraph, and with it any argument).
pub fn skip_space(text: &str, mut i: usize) -> usize {
    let bytes = text.as_bytes();
    let mut breaks = 0;
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' | b'\r' => {}
            b'\n' if breaks == 0 => breaks += 1,
            _ => break,
        }
        i += 1;
    }
    i
}

/// The offset of the `}` that closes the group opened at `open`, and the
/// offset after it; an unclosed group ends with the text.
pub fn group(text: &str, open: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return (i, i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (text.len(), text.len())
}

/// A mandatory argument after spaces at `i`: a group's content, a command,
/// or one character. `None` at the end of the text or of a paragraph.
pub fn argument(text: &str, i: usize) -> Option<(Range<usize>, usize)> {
    let start = skip_space(text, i);
    let first = *text.as_bytes().get(start)?;
    Some(match first {
        b'{' => {
            let (close, after) = group(text, start);
            (start + 1..close, after)
        }
        b'\\' => {
            let (_, end) = command(text, start);
            (start..end, end)
        }
        b'\n' | b'}' => return None,
        _ => {
            let end = start + text[start..].chars().next().map_or(0, char::len_utf8);
            (start..end, end)
        }
    })
}

/// The text of the argument at `i` (empty when there is none) and the
/// offset after it.
pub fn argument_text(text: &str, i: usize) -> (&str, usize) {
    match argument(text, i) {
        Some((range, after)) => (&text[range], after),
        None => ("", i),
    }
}

/// An optional argument `[...]` right at `i` (after spaces when
/// `after_space`): its content and the offset after it.
pub fn optional(text: &str, i: usize, after_space: bool) -> Option<(Range<usize>, usize)> {
    let start = if after_space { skip_space(text, i) } else { i };
    let bytes = text.as_bytes();
    if bytes.get(start) != Some(&b'[') {
        return None;
    }
    let limit = bytes.len().min(start + MAX_OPTIONAL_BYTES);
    let mut depth = 0usize;
    let mut j = start + 1;
    while j < limit {
        match bytes[j] {
            b'\\' => j += 1,
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b']' if depth == 0 => return Some((start + 1..j, j + 1)),
            b'[' => return None,
            b'\n'
                if bytes[j + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_whitespace())
                    .any(|&b| b == b'\n') =>
            {
                return None;
            }
            _ => {}
        }
        j += 1;
    }
    None
}

/// The offset after a `*` and the optional arguments right at `i`.
pub fn skip_options(text: &str, mut i: usize) -> usize {
    if text.as_bytes().get(i) == Some(&b'*') {
        i += 1;
    }
    while let Some((_, after)) = optional(text, i, false) {
        i = after;
    }
    i
}

/// [`skip_options`] where spaces may come before the options, as after a
/// command whose arguments are known.
pub fn skip_spaced_options(text: &str, mut i: usize) -> usize {
    if text.as_bytes().get(i) == Some(&b'*') {
        i += 1;
    }
    while let Some((_, after)) = optional(text, i, true) {
        i = after;
    }
    i
}

/// The offset after `count` mandatory arguments (and the optional ones
/// between them) from `i`.
pub fn skip_arguments(text: &str, mut i: usize, count: usize) -> usize {
    for _ in 0..count {
        i = skip_spaced_options(text, i);
        match argument(text, i) {
            Some((_, after)) => i = after,
            None => break,
        }
    }
    skip_spaced_options(text, i)
}

/// Where the environment `name`, whose content starts at `from`, ends: the
/// offset of its `\end{name}` and the offset after it. Environments of the
/// same name nest; an unclosed one ends with the text.
pub fn environment_end(text: &str, name: &str, from: usize) -> (usize, usize) {
    let open = format!("\\begin{{{name}}}");
    let close = format!("\\end{{{name}}}");
    let find = |pattern: &str, from: usize, to: usize| {
        text[from..to].find(pattern).map(|offset| from + offset)
    };
    let mut depth = 0usize;
    let mut i = from;
    let mut next_close = find(&close, i, text.len());
    while let Some(close_at) = next_close {
        if let Some(open_at) = find(&open, i, close_at) {
            depth += 1;
            i = open_at + open.len();
            continue;
        }
        if depth == 0 {
            return (close_at, close_at + close.len());
        }
        depth -= 1;
        i = close_at + close.len();
        next_close = find(&close, i, text.len());
    }
    (text.len(), text.len())
}

/// What [`top_level`] meets outside groups and nested environments.
pub enum Mark<'a> {
    Command(&'a str),
    Ampersand,
}

/// Calls `visit` with the start and end offsets of each command (and `&`)
/// that stands outside braces, inline math and nested environments.
pub fn top_level(text: &str, mut visit: impl FnMut(Mark, usize, usize)) {
    let bytes = text.as_bytes();
    let (mut braces, mut environments) = (0usize, 0usize);
    let mut in_math = false;
    let mut i = 0;
    while i < bytes.len() {
        let outside = braces == 0 && environments == 0 && !in_math;
        match bytes[i] {
            b'{' => braces += 1,
            b'}' => braces = braces.saturating_sub(1),
            b'$' => in_math = !in_math,
            b'\n'
                if in_math
                    && text[i + 1..]
                        .trim_start_matches([' ', '\t', '\r'])
                        .starts_with('\n') =>
            {
                in_math = false;
            }
            b'&' if outside => visit(Mark::Ampersand, i, i + 1),
            b'\\' => {
                let (name, end) = command(text, i);
                match name {
                    "begin" => environments += 1,
                    "end" => environments = environments.saturating_sub(1),
                    _ if outside => visit(Mark::Command(name), i, end),
                    _ => {}
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// The offset of the `close` (`$`, `\)`, `\]`, `$$`) that ends math
/// opened by `open` before `from`; `None` when a blank line, another
/// `open` (math does not nest) or the end of the text comes first.
pub fn math_end(text: &str, from: usize, open: &str, close: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        if text[i..].starts_with(close) {
            return Some(i);
        }
        if open != close && text[i..].starts_with(open) {
            return None;
        }
        match bytes[i] {
            b'\\' => i += 1,
            b'\n'
                if text[i + 1..]
                    .trim_start_matches([' ', '\t', '\r'])
                    .starts_with('\n') =>
            {
                return None;
            }
            _ => {}
        }
        i += 1;
    }
    None
}
