//! Running text: commands turned into the text they print, Markdown
//! emphasis, links, citations, footnotes and inline math.

use super::{Converter, MAX_DEPTH, scan};

impl Converter {
    /// Converts running text to one tidy Markdown paragraph (line breaks
    /// only where `\\` puts them), with its code put back.
    pub(super) fn inline(&mut self, text: &str, depth: usize) -> String {
        let raw = self.inline_raw(text, depth);
        super::prepare::restore(&tidy(&raw), &self.code)
    }

    fn inline_raw(&mut self, text: &str, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return plain(text);
        }
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while i < bytes.len() {
            let run = bytes[i..]
                .iter()
                .position(|b| b"\\{}$~-`'&\n\t\r".contains(b))
                .map_or(bytes.len(), |offset| i + offset);
            out.push_str(&text[i..run]);
            i = run;
            let Some(&byte) = bytes.get(i) else { break };
            i = match byte {
                b'\\' => self.command(text, i, depth, &mut out),
                b'{' => {
                    let (close, after) = scan::group(text, i);
                    let inner = self.inline_raw(&text[i + 1..close], depth + 1);
                    out.push_str(&inner);
                    after
                }
                b'$' => math(text, i, &mut out),
                b'-' => dashes(text, i, &mut out),
                b'`' | b'\'' => quotes(text, i, &mut out),
                b'}' => i + 1,
                _ => {
                    out.push(' ');
                    i + 1
                }
            };
        }
        out
    }

    /// Writes what the command at `i` prints; returns the offset after it.
    fn command(&mut self, text: &str, i: usize, depth: usize, out: &mut String) -> usize {
        let (name, end) = scan::command(text, i);
        if !name.starts_with(|c: char| c.is_ascii_alphabetic()) {
            return self.control_symbol(text, name, end, depth, out);
        }
        if let Some(symbol) = symbol(name) {
            out.push_str(symbol);
            return end;
        }
        if ACCENT_COMMANDS.contains(&name) && text[end..].starts_with(['{', ' ']) {
            return self.accent(text, name, end, depth, out);
        }
        let after_options = scan::skip_spaced_options(text, end);
        match name {
            "emph" | "textit" | "textsl" | "mathit" => {
                self.wrapped(text, after_options, "*", depth, out)
            }
            "textbf" => self.wrapped(text, after_options, "**", depth, out),
            "texttt" => self.code_span(text, after_options, depth, out),
            "url" | "nolinkurl" => {
                let (url, after) = scan::argument_text(text, after_options);
                out.push_str(&format!("<{}>", unescape_url(url)));
                after
            }
            "href" => {
                let (url, after) = scan::argument_text(text, after_options);
                let (label, after) = scan::argument_text(text, after);
                let label = tidy(&self.inline_raw(label, depth + 1));
                let url = unescape_url(url);
                if label.is_empty() {
                    out.push_str(&format!("<{url}>"));
                } else {
                    out.push_str(&format!("[{label}]({url})"));
                }
                after
            }
            "footnote" | "footnotetext" | "thanks" => {
                let (note, after) = scan::argument_text(text, after_options);
                let note = self.inline(note, depth + 1);
                if !note.is_empty() {
                    self.footnotes.push(note);
                    out.push_str(&format!("[^{}]", self.footnotes.len()));
                }
                after
            }
            "input" | "include" | "subfile" => {
                let (file, after) = scan::argument_text(text, after_options);
                out.push_str(&self.included(file));
                after
            }
            "begin" | "end" => {
                let (environment, after) = scan::argument_text(text, end);
                out.push(' ');
                match super::tabular::argument_count(environment.trim()) {
                    Some(count) if name == "begin" => scan::skip_arguments(text, after, count),
                    _ => after,
                }
            }
            "multicolumn" => scan::skip_arguments(text, after_options, 2),
            "cmidrule" => {
                let after = text[after_options..]
                    .starts_with('(')
                    .then(|| text[after_options..].find(')'))
                    .flatten()
                    .map_or(after_options, |close| after_options + close + 1);
                scan::skip_arguments(text, after, 1)
            }
            _ if is_citation(name) => {
                let (keys, after) = scan::argument_text(text, after_options);
                if name != "nocite" {
                    out.push_str(&bracketed_keys(keys));
                }
                after
            }
            _ if is_reference(name) => {
                let (key, after) = scan::argument_text(text, after_options);
                out.push_str(&bracketed_keys(key));
                after
            }
            "keywords" => {
                let (keywords, after) = scan::argument_text(text, after_options);
                out.push_str(&format!(
                    "Keywords: {}",
                    self.inline_raw(keywords, depth + 1)
                ));
                after
            }
            _ => {
                if let Some(count) = dropped_arguments(name) {
                    return scan::skip_arguments(text, end, count);
                }
                if text[end..].starts_with("{}") && !is_wordless(name) {
                    // `\ourtool{}` is how a text macro is written: one defined in
                    // another file (pulled in by `\input`) keeps its name as its word.
                    out.push_str(name);
                    return end + 2;
                }
                after_assignment(text, scan::skip_options(text, end))
            }
        }
    }

    /// `\\`, `\%`, `\,`, `\(`...: a backslash and one character.
    fn control_symbol(
        &mut self,
        text: &str,
        name: &str,
        end: usize,
        depth: usize,
        out: &mut String,
    ) -> usize {
        match name {
            "\\" => {
                out.push('\n');
                scan::skip_options(text, end)
            }
            "%" | "&" | "_" | "$" | "#" | "{" | "}" | "|" => {
                out.push_str(name);
                end
            }
            "," | ";" | ":" | ">" | " " | "\n" | "\t" | "\r" => {
                out.push(' ');
                end
            }
            "!" | "/" | "-" | "@" | "" => end,
            "(" | "[" => {
                let (open, close, fence) = if name == "(" {
                    ("\\(", "\\)", "$")
                } else {
                    ("\\[", "\\]", "$$")
                };
                match scan::math_end(text, end, open, close) {
                    Some(close_at) => {
                        out.push_str(&format!("{fence}{}{fence}", one_line(&text[end..close_at])));
                        close_at + 2
                    }
                    None => end,
                }
            }
            _ if ACCENT_COMMANDS.contains(&name) => self.accent(text, name, end, depth, out),
            _ => {
                out.push_str(name);
                end
            }
        }
    }

    /// An accented letter: `\'e`, `\"{o}`, `\c c`, `\v{\i}`.
    fn accent(
        &mut self,
        text: &str,
        mark: &str,
        end: usize,
        depth: usize,
        out: &mut String,
    ) -> usize {
        let (base, after) = scan::argument_text(text, end);
        let base = self.inline_raw(base, depth + 1);
        out.push_str(&accented(mark, base.trim()));
        after
    }

    /// `\emph{x}` and its kin: the text between Markdown `marker`s.
    fn wrapped(
        &mut self,
        text: &str,
        i: usize,
        marker: &str,
        depth: usize,
        out: &mut String,
    ) -> usize {
        let (inner, after) = scan::argument_text(text, i);
        let inner = self.inline_raw(inner, depth + 1);
        let trimmed = inner.trim();
        if !trimmed.is_empty() && !trimmed.contains('\n') {
            let lead = if inner.starts_with(char::is_whitespace) {
                " "
            } else {
                ""
            };
            let trail = if inner.ends_with(char::is_whitespace) {
                " "
            } else {
                ""
            };
            out.push_str(&format!("{lead}{marker}{trimmed}{marker}{trail}"));
        } else {
            out.push_str(&inner);
        }
        after
    }

    fn code_span(&mut self, text: &str, i: usize, depth: usize, out: &mut String) -> usize {
        let (inner, after) = scan::argument_text(text, i);
        let inner = one_line(&self.inline_raw(inner, depth + 1));
        if inner.is_empty() || inner.contains('`') || inner.contains('\u{E000}') {
            out.push_str(&inner);
        } else {
            out.push_str(&format!("`{inner}`"));
        }
        after
    }

    /// The marker left where `\input{file}` names another file (its text is
    /// not here: kts reads the file on its own), and a warning.
    pub(super) fn included(&mut self, file: &str) -> String {
        let file = file.trim();
        let has_extension = file
            .rsplit('/')
            .next()
            .is_some_and(|name| name.contains('.'));
        let file = if has_extension {
            file.to_string()
        } else {
            format!("{file}.tex")
        };
        self.warnings.push(format!(
            "\\input{{{file}}} is not followed (only the file itself is read)"
        ));
        format!("[included file: {file}]")
    }
}

/// Commands that put an accent on the letter after them.
const ACCENT_COMMANDS: [&str; 16] = [
    "'", "`", "^", "\"", "~", "=", ".", "u", "v", "H", "c", "k", "r", "d", "b", "t",
];

/// Precomposed letters by accent: (accent, letters, the same accented).
pub(super) const ACCENTED: [(&str, &str, &str); 13] = [
    (
        "'",
        "aeiouyAEIOUYcnszCNSZlrLRgG",
        "áéíóúýÁÉÍÓÚÝćńśźĆŃŚŹĺŕĹŔǵǴ",
    ),
    ("`", "aeiouAEIOU", "àèìòùÀÈÌÒÙ"),
    ("^", "aeiouAEIOUcgCGhHjJsSwWyY", "âêîôûÂÊÎÔÛĉĝĈĜĥĤĵĴŝŜŵŴŷŶ"),
    ("\"", "aeiouyAEIOUY", "äëïöüÿÄËÏÖÜŸ"),
    ("~", "anoANOiuIU", "ãñõÃÑÕĩũĨŨ"),
    ("=", "aeiouAEIOU", "āēīōūĀĒĪŌŪ"),
    (".", "zZeEcCgGI", "żŻėĖċĊġĠİ"),
    ("u", "aAgGuUeEoOiI", "ăĂğĞŭŬĕĔŏŎĭĬ"),
    ("v", "cCsSzZeErRnNdDtTlL", "čČšŠžŽěĚřŘňŇďĎťŤľĽ"),
    ("H", "oOuU", "őŐűŰ"),
    ("c", "cCsStTgGkKlLnNrR", "çÇşŞţŢģĢķĶļĻņŅŗŖ"),
    ("k", "aAeEiIuU", "ąĄęĘįĮųŲ"),
    ("r", "aAuU", "åÅůŮ"),
];

/// `base` with the accent `mark`: a precomposed letter where there is one,
/// else the letter and a combining mark.
fn accented(mark: &str, base: &str) -> String {
    let base = base.replace(['ı', 'ȷ'], "i");
    let mut chars = base.chars();
    let (Some(letter), None) = (chars.next(), chars.next()) else {
        return base;
    };
    if let Some((_, letters, accented)) = ACCENTED.iter().find(|(m, _, _)| *m == mark)
        && let Some(index) = letters.chars().position(|c| c == letter)
        && let Some(composed) = accented.chars().nth(index)
    {
        return composed.to_string();
    }
    let combining = match mark {
        "'" => '\u{301}',
        "`" => '\u{300}',
        "^" => '\u{302}',
        "\"" => '\u{308}',
        "~" => '\u{303}',
        "=" => '\u{304}',
        "." => '\u{307}',
        "u" => '\u{306}',
        "v" => '\u{30C}',
        "H" => '\u{30B}',
        "c" => '\u{327}',
        "k" => '\u{328}',
        "r" => '\u{30A}',
        "d" => '\u{323}',
        "b" => '\u{331}',
        _ => '\u{361}',
    };
    format!("{letter}{combining}")
}

/// The text of commands that print a fixed symbol or word.
fn symbol(name: &str) -> Option<&'static str> {
    Some(match name {
        "ldots" | "dots" | "textellipsis" => "…",
        "LaTeX" => "LaTeX",
        "LaTeXe" => "LaTeX2e",
        "TeX" => "TeX",
        "BibTeX" => "BibTeX",
        "o" => "ø",
        "O" => "Ø",
        "ae" => "æ",
        "AE" => "Æ",
        "oe" => "œ",
        "OE" => "Œ",
        "aa" => "å",
        "AA" => "Å",
        "ss" => "ß",
        "l" => "ł",
        "L" => "Ł",
        "i" => "ı",
        "j" => "ȷ",
        "S" | "textsection" => "§",
        "P" | "textparagraph" => "¶",
        "dag" | "textdagger" => "†",
        "ddag" | "textdaggerdbl" => "‡",
        "copyright" | "textcopyright" => "©",
        "textregistered" => "®",
        "texttrademark" => "™",
        "pounds" | "textsterling" => "£",
        "euro" | "texteuro" => "€",
        "textdegree" => "°",
        "textbackslash" => "\\",
        "textasciitilde" => "~",
        "textasciicircum" => "^",
        "textasciigrave" => "`",
        "textbar" => "|",
        "textless" => "<",
        "textgreater" => ">",
        "textbullet" => "•",
        "textperiodcentered" => "·",
        "textendash" => "–",
        "textemdash" => "—",
        "textquoteleft" => "‘",
        "textquoteright" => "’",
        "textquotedblleft" => "“",
        "textquotedblright" => "”",
        "guillemotleft" | "guillemetleft" => "«",
        "guillemotright" | "guillemetright" => "»",
        "textunderscore" => "_",
        "textdollar" => "$",
        "textbraceleft" => "{",
        "textbraceright" => "}",
        "texttimes" => "×",
        "textpm" => "±",
        "textmu" => "µ",
        "checkmark" => "✓",
        "slash" => "/",
        "quad" | "qquad" | "enspace" | "thinspace" | "space" | "nobreakspace" | "item" => " ",
        "newline" | "linebreak" | "break" | "par" | "cr" => "\n",
        "and" | "And" | "AND" => ", ",
        "today" => "",
        _ => return None,
    })
}

fn is_citation(name: &str) -> bool {
    name.starts_with("cite")
        || name.starts_with("Cite")
        || matches!(
            name,
            "nocite"
                | "parencite"
                | "Parencite"
                | "textcite"
                | "Textcite"
                | "autocite"
                | "Autocite"
                | "footcite"
                | "supercite"
                | "smartcite"
        )
}

fn is_reference(name: &str) -> bool {
    matches!(
        name,
        "ref"
            | "eqref"
            | "autoref"
            | "Autoref"
            | "cref"
            | "Cref"
            | "crefrange"
            | "pageref"
            | "nameref"
            | "vref"
            | "Vref"
            | "fref"
            | "Fref"
    )
}

/// `[key1, key2]` for the keys `a,b` of a citation or reference.
fn bracketed_keys(keys: &str) -> String {
    let keys: Vec<&str> = keys
        .split(',')
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .collect();
    if keys.is_empty() {
        String::new()
    } else {
        format!("[{}]", keys.join(", "))
    }
}

/// How many arguments of a command are settings, not text: the text that
/// follows them is kept (`\textcolor{red}{text}`).
fn dropped_arguments(name: &str) -> Option<usize> {
    Some(match name {
        "label" | "vspace" | "hspace" | "includegraphics" | "pagestyle" | "thispagestyle"
        | "bibliographystyle" | "bibliography" | "addbibresource" | "color" | "pagenumbering"
        | "hypersetup" | "graphicspath" | "captionsetup" | "usepackage" | "documentclass"
        | "RequirePackage" | "cline" | "hhline" | "rowcolor" | "cellcolor" | "columncolor"
        | "noalign" | "linespread" | "enlargethispage" | "newcounter" | "stepcounter"
        | "refstepcounter" | "arrayrulecolor" | "setcitestyle" | "fontfamily" | "fontseries"
        | "fontshape" | "usetikzlibrary" | "pgfplotsset" | "tikzset" | "lstset" | "setminted"
        | "hyphenation" | "textcolor" | "colorbox" | "scalebox" | "rotatebox" | "raisebox"
        | "parbox" | "captionof" | "title" | "author" | "date" | "includeonly" | "affiliation"
        | "affil" | "address" | "institute" | "email" | "ead" | "orcid" | "orcidID" | "inst"
        | "titlerunning" | "authorrunning" | "shorttitle" | "shortauthors" | "runningtitle"
        | "runningauthor" | "markright" | "pdfbookmark" | "theoremstyle" | "bibitem"
        | "adjustbox" => 1,
        "setlength" | "addtolength" | "setcounter" | "addtocounter" | "fontsize" | "fcolorbox"
        | "resizebox" | "multirow" | "import" | "rule" | "markboth" => 2,
        "definecolor" | "specialrule" | "addcontentsline" => 3,
        _ => return None,
    })
}

/// LaTeX's own commands that show no word of their own (spacing, layout,
/// font switches, boxes), often written with an empty group: `\mbox{}`.
const WORDLESS_COMMANDS: &str = "mbox makebox fbox framebox hbox vbox phantom hphantom vphantom \
    text textrm textsf textup textmd textnormal textsc underline ensuremath noindent indent \
    centering raggedright raggedleft par newline linebreak pagebreak nopagebreak newpage \
    clearpage cleardoublepage maketitle tableofcontents listoffigures listoftables appendix \
    hfill vfill hline toprule midrule bottomrule quad qquad smallskip medskip bigskip relax \
    protect leavevmode null strut xspace selectfont normalfont em bf it tt sc rm sf sl itshape \
    bfseries scshape upshape mdseries rmfamily sffamily ttfamily slshape tiny scriptsize \
    footnotesize small normalsize large Large LARGE huge Huge footnotemark index nobreak \
    allowbreak sloppy today";

fn is_wordless(name: &str) -> bool {
    WORDLESS_COMMANDS
        .split_whitespace()
        .any(|command| command == name)
}

/// The offset after a TeX assignment (`\looseness=-1`, `\parindent 0pt`)
/// that follows a command at `i`, or `i`.
fn after_assignment(text: &str, i: usize) -> usize {
    let rest = text[i..].trim_start_matches(' ');
    let Some(value) = rest.strip_prefix('=') else {
        return i;
    };
    let value = value.trim_start_matches(' ');
    let number = value
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(value.len());
    if number == 0 {
        return i;
    }
    let mut consumed = &value[number..];
    for unit in [
        "pt", "em", "ex", "cm", "mm", "in", "bp", "pc", "sp", "dd", "cc", "mu",
    ] {
        if let Some(after) = consumed.strip_prefix(unit) {
            consumed = after;
            break;
        }
    }
    text.len() - consumed.len()
}

/// Inline math as written: `$x$` stays `$x$` on one line.
fn math(text: &str, i: usize, out: &mut String) -> usize {
    let display = text[i..].starts_with("$$");
    let (open, close) = if display { (i + 2, "$$") } else { (i + 1, "$") };
    match scan::math_end(text, open, close, close) {
        Some(close_at) => {
            out.push_str(&format!(
                "{close}{}{close}",
                one_line(&text[open..close_at])
            ));
            close_at + close.len()
        }
        None => {
            out.push('$');
            i + 1
        }
    }
}

/// `--` and `---` as en and em dashes.
fn dashes(text: &str, i: usize, out: &mut String) -> usize {
    let run = text[i..].bytes().take_while(|&b| b == b'-').count();
    match run {
        2 => out.push('–'),
        3 => out.push('—'),
        _ => out.push_str(&text[i..i + run]),
    }
    i + run
}

/// ``` `` ``` and `''` as curly double quotes, `` ` `` as an opening single one.
fn quotes(text: &str, i: usize, out: &mut String) -> usize {
    let pair = &text[i..(i + 2).min(text.len())];
    match pair {
        "``" => out.push('“'),
        "''" => out.push('”'),
        _ if pair.starts_with('`') => {
            out.push('‘');
            return i + 1;
        }
        _ => {
            out.push('\'');
            return i + 1;
        }
    }
    i + 2
}

/// A URL as written in `\url{}`: escapes dropped.
fn unescape_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut chars = url.trim().chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.extend(chars.next()),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

/// Text too deeply nested to read: commands and braces dropped.
pub(super) fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                while chars.next_if(char::is_ascii_alphabetic).is_some() {}
                out.push(' ');
            }
            '{' | '}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Whitespace collapsed: one space between words, line breaks kept but not
/// repeated.
pub(super) fn tidy(text: &str) -> String {
    text.split('\n')
        .map(one_line)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn one_line(text: &str) -> String {
    super::super::one_line(text)
}

/// Whether the converter reads the command `name` itself (a user macro
/// of that name is not expanded over it).
pub(super) fn is_known(name: &str) -> bool {
    symbol(name).is_some()
        || dropped_arguments(name).is_some()
        || is_citation(name)
        || is_reference(name)
        || super::SECTIONS.contains(&name)
        || matches!(
            name,
            "emph"
                | "textit"
                | "textsl"
                | "textbf"
                | "texttt"
                | "url"
                | "href"
                | "footnote"
                | "footnotetext"
                | "thanks"
                | "input"
                | "include"
                | "begin"
                | "end"
                | "caption"
                | "captionof"
                | "item"
                | "multicolumn"
                | "verb"
                | "keywords"
        )
}
