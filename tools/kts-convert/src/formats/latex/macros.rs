//! User macros: `\newcommand`, `\def` and their kin are read and removed,
//! and the macros they define are expanded where they are used, their
//! parameters (`#1`) replaced by the arguments. Expansion goes over the
//! text a bounded number of times and stops growing it past a budget, so a
//! macro that expands to itself (`\newcommand{\a}{\a}`) or doubles at each
//! step costs bounded time and memory; what is left unexpanded is dropped
//! later as any unknown command is.

use std::collections::HashMap;

use super::scan;

/// Passes over the text: macros defined through other macros expand in
/// as many.
const MAX_PASSES: usize = 8;

struct Macro {
    parameters: usize,
    /// The default of the first parameter, which makes it optional.
    default: Option<String>,
    body: String,
}

#[derive(Default)]
pub struct Macros {
    defined: HashMap<String, Macro>,
    /// Theorem-like environments `\newtheorem` declares, with their labels.
    pub theorems: HashMap<String, String>,
}

/// Reads the definitions in `text`; returns the text without them.
/// Commands the converter handles itself (`is_known`) are not redefined.
pub fn collect(text: &str, is_known: impl Fn(&str) -> bool) -> (String, Macros) {
    let mut macros = Macros::default();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(offset) = text[i..].find('\\') {
        let start = i + offset;
        out.push_str(&text[i..start]);
        let (name, end) = scan::command(text, start);
        let definition = match name {
            "newcommand" | "renewcommand" | "providecommand" | "DeclareRobustCommand" => {
                new_command(text, end)
            }
            "def" | "gdef" | "edef" | "xdef" => def(text, end),
            "DeclareMathOperator" => math_operator(text, end),
            "newtheorem" => {
                let (after, theorem) = new_theorem(text, end);
                macros.theorems.extend(theorem);
                out.push(' ');
                i = after;
                continue;
            }
            "newenvironment" | "renewenvironment" => {
                Some((scan::skip_arguments(text, end, 3), None))
            }
            "let" => {
                let after = scan::argument(text, end).map_or(end, |(_, after)| after);
                let after = text[after..].strip_prefix('=').map_or(after, |_| after + 1);
                Some((
                    scan::argument(text, after).map_or(after, |(_, after)| after),
                    None,
                ))
            }
            _ => None,
        };
        match definition {
            Some((after, defined)) => {
                if let Some((name, definition)) = defined.filter(|(name, _)| !is_known(name)) {
                    macros.defined.insert(name, definition);
                }
                i = after;
            }
            None => {
                out.push_str(&text[start..end]);
                i = end;
            }
        }
    }
    out.push_str(&text[i..]);
    (out, macros)
}

type Definition = (usize, Option<(String, Macro)>);

/// `\newcommand{\name}[2][default]{body}` (or `\newcommand\name...`).
fn new_command(text: &str, end: usize) -> Option<Definition> {
    let i = scan::skip_options(text, end);
    let (target, mut i) = scan::argument_text(text, i);
    let name = target.trim().strip_prefix('\\')?.to_string();
    let mut parameters = 0;
    if let Some((count, after)) = scan::optional(text, i, true) {
        parameters = text[count].trim().parse().unwrap_or(0).min(9);
        i = after;
    }
    let mut default = None;
    if let Some((value, after)) = scan::optional(text, i, true) {
        default = Some(text[value].to_string());
        i = after;
    }
    let (body, after) = scan::argument_text(text, i);
    let body = body.to_string();
    Some((
        after,
        Some((
            name,
            Macro {
                parameters,
                default,
                body,
            },
        )),
    ))
}

/// `\def\name#1#2{body}`.
fn def(text: &str, end: usize) -> Option<Definition> {
    let start = scan::skip_space(text, end);
    if !text[start..].starts_with('\\') {
        return None;
    }
    let (name, after_name) = scan::command(text, start);
    // Parameter text is short (`#1#2`): a `{` further away is no body.
    let parameters_text = scan::prefix(&text[after_name..], 64);
    let open = after_name + parameters_text.find('{')?;
    let parameters = text[after_name..open].matches('#').count().min(9);
    let (close, after) = scan::group(text, open);
    let body = text[(open + 1).min(close)..close].to_string();
    let usable = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphabetic());
    let definition = Macro {
        parameters,
        default: None,
        body,
    };
    Some((after, usable.then(|| (name.to_string(), definition))))
}

/// `\DeclareMathOperator{\name}{text}`: an upright name in math.
fn math_operator(text: &str, end: usize) -> Option<Definition> {
    let i = scan::skip_options(text, end);
    let (target, i) = scan::argument_text(text, i);
    let name = target.trim().strip_prefix('\\')?.to_string();
    let (operator, after) = scan::argument_text(text, i);
    let body = format!("\\operatorname{{{operator}}}");
    Some((
        after,
        Some((
            name,
            Macro {
                parameters: 0,
                default: None,
                body,
            },
        )),
    ))
}

/// `\newtheorem{name}[counter]{Label}[within]`.
fn new_theorem(text: &str, end: usize) -> (usize, Option<(String, String)>) {
    let (name, i) = scan::argument_text(text, scan::skip_options(text, end));
    let i = scan::skip_options(text, scan::skip_space(text, i));
    let (label, after) = scan::argument_text(text, i);
    let after = scan::skip_options(text, after);
    let theorem =
        (!name.trim().is_empty()).then(|| (name.trim().to_string(), label.trim().to_string()));
    (after, theorem)
}

/// Expands the macros in `text`; a warning says so when the budget stopped it.
pub fn expand(mut text: String, macros: &Macros, warnings: &mut Vec<String>) -> String {
    if macros.defined.is_empty() {
        return text;
    }
    let budget = text.len().saturating_mul(4).max(1 << 20);
    for _ in 0..MAX_PASSES {
        let (expanded, changed, complete) = expand_once(&text, macros, budget);
        text = expanded;
        if !complete {
            warnings.push("macros expand beyond a budget: the rest is left unexpanded".into());
            break;
        }
        if !changed {
            break;
        }
    }
    text
}

/// One pass: (the text, whether a macro was expanded, whether the pass
/// finished within the budget).
fn expand_once(text: &str, macros: &Macros, budget: usize) -> (String, bool, bool) {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut i = 0;
    while let Some(offset) = text[i..].find('\\') {
        let start = i + offset;
        out.push_str(&text[i..start]);
        let (name, end) = scan::command(text, start);
        i = end;
        let Some(definition) = macros.defined.get(name) else {
            out.push_str(&text[start..end]);
            continue;
        };
        if out.len() + definition.body.len() > budget {
            out.push_str(&text[start..]);
            return (out, changed, false);
        }
        let mut arguments = Vec::with_capacity(definition.parameters);
        if let Some(default) = &definition.default {
            match scan::optional(text, i, false) {
                Some((value, after)) => {
                    arguments.push(&text[value]);
                    i = after;
                }
                None => arguments.push(default.as_str()),
            }
        }
        while arguments.len() < definition.parameters {
            let (argument, after) = scan::argument_text(text, i);
            arguments.push(argument);
            i = after;
        }
        substitute(&definition.body, &arguments, &mut out);
        changed = true;
    }
    out.push_str(&text[i..]);
    (out, changed, true)
}

/// Writes `body` with `#n` replaced by the nth argument and `##` by `#`.
fn substitute(body: &str, arguments: &[&str], out: &mut String) {
    let mut chars = body.char_indices().peekable();
    while let Some((_, c)) = chars.next() {
        if c != '#' {
            out.push(c);
            continue;
        }
        match chars.peek().map(|&(_, next)| next) {
            Some('#') => {
                chars.next();
                out.push('#');
            }
            Some(digit @ '1'..='9') => {
                chars.next();
                let n = digit as usize - '1' as usize;
                out.push_str(arguments.get(n).copied().unwrap_or(""));
            }
            _ => out.push('#'),
        }
    }
}
