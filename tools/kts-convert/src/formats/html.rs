//! HTML: the parsed tree is walked once (selecting block tags would return
//! nested blocks twice) and written as Markdown blocks.

use kts_record::ErrorCode;
use scraper::{ElementRef, Html, Node, Selector};
use serde_json::{Map, Value};

use super::{ConvertError, Converted, text};

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let decoded = decode(bytes)?;
    let document = Html::parse_document(&decoded.text);
    let mut out = Blocks::default();
    render_blocks(content_root(&document), &mut out);
    let markdown = out.finish();
    if markdown.trim().is_empty() {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            "the HTML page has no visible text",
        ));
    }
    let mut properties = properties(&document);
    decoded.note(&mut properties);
    Ok(Converted {
        markdown,
        title: title(&document),
        properties,
    })
}

/// Decodes the bytes, honouring a `<meta charset>` when they are not UTF-8.
/// A page that declares UTF-8 but is not is judged as an undeclared one is
/// (CMS exports often write Latin-1 under a UTF-8 declaration).
fn decode(bytes: &[u8]) -> Result<text::Decoded, ConvertError> {
    let has_bom = encoding_rs::Encoding::for_bom(bytes).is_some();
    if !has_bom
        && std::str::from_utf8(bytes).is_err()
        && let Some(encoding) = declared_charset(bytes).map(|e| e.output_encoding())
        && encoding != encoding_rs::UTF_8
    {
        let text = encoding.decode_without_bom_handling(bytes).0;
        return Ok(text::Decoded {
            encoding: Some(encoding),
            ..text::decode(text.as_bytes())?
        });
    }
    text::decode(bytes)
}

fn declared_charset(bytes: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(2048)]).to_ascii_lowercase();
    let at = head.find("charset")? + "charset".len();
    let rest = head[at..].trim_start().strip_prefix('=')?.trim_start();
    let label: String = rest
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || "-_:".contains(*c))
        .collect();
    encoding_rs::Encoding::for_label(label.as_bytes())
}

/// The page's `<main>` when it has exactly one, else the whole document.
fn content_root(document: &Html) -> ElementRef<'_> {
    let main = selector("main, [role=main]");
    let mains: Vec<_> = document.select(&main).collect();
    match mains.as_slice() {
        [main] if !main.text().all(|t| t.trim().is_empty()) => *main,
        _ => document.root_element(),
    }
}

fn selector(css: &str) -> Selector {
    Selector::parse(css).unwrap_or_else(|_| unreachable!("static selector {css} parses"))
}

fn title(document: &Html) -> Option<String> {
    let from_title = document
        .select(&selector("head title, title"))
        .next()
        .map(|t| collapse(&t.text().collect::<String>()));
    let from_og = || meta(document, "property", "og:title");
    from_title.filter(|t| !t.is_empty()).or_else(from_og)
}

fn meta(document: &Html, attribute: &str, name: &str) -> Option<String> {
    document
        .select(&selector("meta"))
        .find(|m| {
            m.attr(attribute)
                .is_some_and(|a| a.eq_ignore_ascii_case(name))
        })
        .and_then(|m| m.attr("content"))
        .map(collapse)
        .filter(|c| !c.is_empty())
}

fn properties(document: &Html) -> Map<String, Value> {
    let mut properties = Map::new();
    let lang = document
        .root_element()
        .attr("lang")
        .map(str::trim)
        .filter(|l| !l.is_empty());
    if let Some(lang) = lang {
        properties.insert("language".into(), lang.into());
    }
    for (name, key) in [
        ("description", "description"),
        ("author", "author"),
        ("keywords", "keywords"),
    ] {
        if let Some(value) = meta(document, "name", name) {
            properties.insert(key.into(), value.into());
        }
    }
    properties
}

/// Elements whose content is never document text.
const SKIPPED: &[&str] = &[
    "head", "script", "style", "noscript", "template", "button", "select", "option", "input",
    "textarea", "label", "nav", "iframe", "object", "embed", "svg", "canvas", "audio", "video",
    "map", "dialog", "math",
];

/// Elements that hold blocks; each starts and ends a paragraph.
const CONTAINERS: &[&str] = &[
    "html",
    "body",
    "main",
    "div",
    "section",
    "article",
    "header",
    "footer",
    "aside",
    "figure",
    "figcaption",
    "address",
    "details",
    "summary",
    "center",
    "form",
    "fieldset",
    "legend",
    "dl",
    "dt",
    "dd",
    "p",
    "caption",
    "hgroup",
    "li",
    "tr",
    "td",
    "th",
    "thead",
    "tbody",
    "tfoot",
];

fn is_skipped(element: ElementRef) -> bool {
    let value = element.value();
    let hidden_style = value.attr("style").is_some_and(|s| {
        s.replace(' ', "")
            .to_ascii_lowercase()
            .contains("display:none")
    });
    SKIPPED.contains(&value.name())
        || value.attr("hidden").is_some()
        || value
            .attr("aria-hidden")
            .is_some_and(|a| a.eq_ignore_ascii_case("true"))
        || hidden_style
}

fn is_block(name: &str) -> bool {
    CONTAINERS.contains(&name)
        || matches!(
            name,
            "h1" | "h2"
                | "h3"
                | "h4"
                | "h5"
                | "h6"
                | "ul"
                | "ol"
                | "table"
                | "pre"
                | "blockquote"
                | "hr"
        )
}

fn has_block_descendant(element: ElementRef) -> bool {
    element
        .descendants()
        .filter_map(ElementRef::wrap)
        .skip(1)
        .any(|e| is_block(e.value().name()) && !is_skipped(e))
}

/// Markdown blocks being written, and the paragraph text gathered so far.
#[derive(Default)]
struct Blocks {
    blocks: Vec<String>,
    inline: String,
}

impl Blocks {
    /// Ends the current paragraph.
    fn flush(&mut self) {
        let paragraph = tidy_inline(&std::mem::take(&mut self.inline));
        if !paragraph.is_empty() {
            self.blocks.push(paragraph);
        }
    }

    fn push(&mut self, block: String) {
        self.flush();
        if !block.trim().is_empty() {
            self.blocks.push(block);
        }
    }

    fn finish(mut self) -> String {
        self.flush();
        let mut markdown = self.blocks.join("\n\n");
        markdown.push('\n');
        markdown
    }
}

fn render_blocks(element: ElementRef, out: &mut Blocks) {
    for child in element.children() {
        match child.value() {
            Node::Text(text) => out.inline.push_str(text),
            Node::Element(_) => {
                if let Some(child) = ElementRef::wrap(child) {
                    render_block(child, out);
                }
            }
            _ => {}
        }
    }
}

fn render_block(element: ElementRef, out: &mut Blocks) {
    if is_skipped(element) {
        return;
    }
    let name = element.value().name();
    match name {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            let level = usize::from(name.as_bytes()[1] - b'0');
            let text = tidy_inline(&inline(element)).replace('\n', " ");
            out.push(if text.is_empty() {
                text
            } else {
                format!("{} {text}", "#".repeat(level))
            });
        }
        "ul" | "ol" => out.push(list(element)),
        "table" => out.push(table(element)),
        "pre" => out.push(fenced(element)),
        "blockquote" => out.push(quote(element)),
        "hr" => out.push("---".into()),
        "br" => out.inline.push(LINE_BREAK),
        "a" if has_block_descendant(element) => block_link(element, out),
        _ if CONTAINERS.contains(&name) || has_block_descendant(element) => {
            out.flush();
            render_blocks(element, out);
            out.flush();
        }
        _ => out.inline.push_str(&inline_element(element)),
    }
}

/// A link around blocks: kept as a link when they make one paragraph.
fn block_link(element: ElementRef, out: &mut Blocks) {
    let content = blocks_of(element, "\n\n");
    let target = element.attr("href").map(str::trim).and_then(link_target);
    match target {
        Some(href) if !content.is_empty() && !content.contains('\n') => {
            out.push(format!("[{}]({})", escape_brackets(&content), url(&href)));
        }
        _ => {
            out.flush();
            render_blocks(element, out);
            out.flush();
        }
    }
}

/// Renders an element's content on its own, as Markdown blocks joined by `separator`.
fn blocks_of(element: ElementRef, separator: &str) -> String {
    let mut out = Blocks::default();
    render_blocks(element, &mut out);
    out.flush();
    out.blocks.join(separator)
}

/// Stands for `<br>` in inline text until whitespace is collapsed.
const LINE_BREAK: char = '\u{E000}';

/// An element's inline Markdown (whitespace not yet collapsed).
fn inline(element: ElementRef) -> String {
    let mut text = String::new();
    for child in element.children() {
        match child.value() {
            Node::Text(t) => text.push_str(t),
            Node::Element(_) => {
                if let Some(child) = ElementRef::wrap(child) {
                    text.push_str(&inline_element(child));
                }
            }
            _ => {}
        }
    }
    text
}

fn inline_element(element: ElementRef) -> String {
    if is_skipped(element) {
        return String::new();
    }
    match element.value().name() {
        "br" => LINE_BREAK.into(),
        "img" => image(element),
        "a" => link(element),
        "strong" | "b" => wrap(&inline(element), "**"),
        "em" | "i" => wrap(&inline(element), "*"),
        "code" | "kbd" | "samp" | "tt" => code_span(&element.text().collect::<String>()),
        name if is_block(name) => format!(" {} ", inline(element)),
        _ => inline(element),
    }
}

/// `**text**`, keeping the surrounding whitespace outside the markers.
fn wrap(text: &str, marker: &str) -> String {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return text.to_string();
    }
    let before = if text.starts_with(char::is_whitespace) {
        " "
    } else {
        ""
    };
    let after = if text.ends_with(char::is_whitespace) {
        " "
    } else {
        ""
    };
    format!("{before}{marker}{trimmed}{marker}{after}")
}

fn code_span(text: &str) -> String {
    let text = collapse(text);
    if text.is_empty() {
        return text;
    }
    let fence = "`".repeat(longest_run(&text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

fn longest_run(text: &str, c: char) -> usize {
    text.split(|x| x != c).map(str::len).max().unwrap_or(0)
}

/// Alt text only: images are never fetched, and embedded data is dropped.
fn image(element: ElementRef) -> String {
    let alt = collapse(element.attr("alt").unwrap_or_default());
    if alt.is_empty() {
        return String::new();
    }
    match element.attr("src").map(str::trim) {
        Some(src) if is_web_url(src) => format!("![{}]({})", escape_brackets(&alt), url(src)),
        _ => alt,
    }
}

fn link(element: ElementRef) -> String {
    let text = inline(element);
    let label = tidy_inline(&text).replace('\n', " ");
    let href = element.attr("href").map(str::trim).and_then(link_target);
    match href {
        Some(href) if !label.is_empty() => {
            let title = element
                .attr("title")
                .map(collapse)
                .filter(|t| !t.is_empty());
            let title = title
                .map(|t| format!(" \"{}\"", t.replace('"', "\\\"")))
                .unwrap_or_default();
            let before = if text.starts_with(char::is_whitespace) {
                " "
            } else {
                ""
            };
            let after = if text.ends_with(char::is_whitespace) {
                " "
            } else {
                ""
            };
            format!(
                "{before}[{}]({}{title}){after}",
                escape_brackets(&label),
                url(&href)
            )
        }
        _ => text,
    }
}

/// Where a link may point in the Markdown: web and relative URLs, not
/// scripts, embedded data or in-page anchors. Search-engine redirects are
/// resolved to their target.
fn link_target(href: &str) -> Option<String> {
    let lower = href.to_ascii_lowercase();
    if href.is_empty()
        || href.starts_with('#')
        || lower.starts_with("javascript:")
        || lower.starts_with("data:")
    {
        return None;
    }
    if lower.starts_with("https://www.bing.com/ck/a?") {
        return bing_target(href);
    }
    Some(href.to_string())
}

/// Bing result links carry the target as `u=a1<base64url>`.
fn bing_target(href: &str) -> Option<String> {
    let query = href.split_once('?')?.1;
    let encoded = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("u=a1"))?;
    let target = String::from_utf8(base64url(encoded)?).ok()?;
    is_web_url(&target).then_some(target)
}

fn base64url(text: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in text.trim_end_matches('=').bytes() {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' | b'+' => 62,
            b'_' | b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
        }
    }
    Some(out)
}

fn is_web_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// A URL safe inside `(...)`.
fn url(href: &str) -> String {
    href.replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

fn escape_brackets(text: &str) -> String {
    text.replace('[', "\\[").replace(']', "\\]")
}

fn list(element: ElementRef) -> String {
    let ordered = element.value().name() == "ol";
    let mut number = element
        .attr("start")
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(1);
    let mut items: Vec<String> = Vec::new();
    for child in element.children().filter_map(ElementRef::wrap) {
        if is_skipped(child) {
            continue;
        }
        // Blocks in an item stay together, so the list stays tight.
        let content = blocks_of(child, "\n");
        match child.value().name() {
            // A list nested directly in a list belongs to the item before it.
            "ul" | "ol" if !items.is_empty() => {
                if let Some(last) = items.last_mut() {
                    last.push('\n');
                    last.push_str(&indent(&content, "  "));
                }
            }
            _ if content.is_empty() => {}
            _ => {
                let marker = if ordered {
                    format!("{number}. ")
                } else {
                    "- ".to_string()
                };
                number += 1;
                let body = indent(&content, &" ".repeat(marker.len()));
                items.push(format!("{marker}{}", body.trim_start()));
            }
        }
    }
    items.join("\n")
}

fn indent(text: &str, prefix: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{prefix}{l}")
            }
        })
        .collect();
    lines.join("\n")
}

fn quote(element: ElementRef) -> String {
    let content = blocks_of(element, "\n\n");
    let lines: Vec<String> = content
        .lines()
        .map(|l| {
            if l.is_empty() {
                ">".into()
            } else {
                format!("> {l}")
            }
        })
        .collect();
    lines.join("\n")
}

fn fenced(element: ElementRef) -> String {
    let text: String = element.text().collect();
    let text = text.strip_prefix('\n').unwrap_or(&text).trim_end();
    if text.trim().is_empty() {
        return String::new();
    }
    let language = std::iter::once(element)
        .chain(element.children().filter_map(ElementRef::wrap))
        .filter_map(|e| e.attr("class"))
        .flat_map(str::split_whitespace)
        .find_map(|class| {
            class
                .strip_prefix("language-")
                .or_else(|| class.strip_prefix("lang-"))
        })
        .unwrap_or_default();
    let fence = "`".repeat(longest_run(text, '`').max(2) + 1);
    format!("{fence}{language}\n{text}\n{fence}")
}

fn table(element: ElementRef) -> String {
    let (rows, header_is_th) = table_rows(element);
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let row_line = |cells: &[String]| {
        let padded = (0..width).map(|i| cells.get(i).map_or("", String::as_str));
        format!("| {} |", padded.collect::<Vec<_>>().join(" | "))
    };
    let mut lines = Vec::new();
    let body = if header_is_th || rows.len() > 1 {
        lines.push(row_line(&rows[0]));
        &rows[1..]
    } else {
        lines.push(row_line(&vec![String::new(); width]));
        &rows[..]
    };
    lines.push(format!("|{}", " --- |".repeat(width)));
    lines.extend(body.iter().map(|r| row_line(r)));
    lines.join("\n")
}

/// The table's cell texts, row by row, and whether the first row is made of
/// header cells. A spanned cell's text fills every grid cell it covers, as a
/// reader of that row or column would take it.
fn table_rows(element: ElementRef) -> (Vec<Vec<String>>, bool) {
    let rows = own_rows(element);
    let mut grid: Vec<Vec<Option<String>>> = vec![Vec::new(); rows.len()];
    let mut first_is_header = false;
    for (r, tr) in rows.iter().enumerate() {
        let cells: Vec<ElementRef> = tr
            .children()
            .filter_map(ElementRef::wrap)
            .filter(|c| matches!(c.value().name(), "td" | "th"))
            .collect();
        if r == 0 {
            first_is_header = !cells.is_empty() && cells.iter().all(|c| c.value().name() == "th");
        }
        let mut column = 0;
        for cell in cells {
            while grid[r].get(column).is_some_and(Option::is_some) {
                column += 1;
            }
            let text = cell_text(cell);
            let rowspan = span(cell, "rowspan").min(rows.len() - r);
            let colspan = span(cell, "colspan");
            for row in &mut grid[r..r + rowspan] {
                if row.len() < column + colspan {
                    row.resize(column + colspan, None);
                }
                for slot in &mut row[column..column + colspan] {
                    *slot = Some(text.clone());
                }
            }
            column += colspan;
        }
    }
    let rows = grid
        .into_iter()
        .filter(|row| !row.is_empty())
        .map(|row| row.into_iter().map(Option::unwrap_or_default).collect())
        .collect();
    (rows, first_is_header)
}

fn span(cell: ElementRef, attribute: &str) -> usize {
    cell.attr(attribute)
        .and_then(|s| s.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, 100)
}

/// The table's own rows, not those of tables nested in its cells.
fn own_rows(table: ElementRef) -> Vec<ElementRef> {
    let mut rows = Vec::new();
    for child in table.children().filter_map(ElementRef::wrap) {
        match child.value().name() {
            "tr" => rows.push(child),
            "thead" | "tbody" | "tfoot" => {
                rows.extend(
                    child
                        .children()
                        .filter_map(ElementRef::wrap)
                        .filter(|r| r.value().name() == "tr"),
                );
            }
            _ => {}
        }
    }
    rows
}

/// A cell's content on one line; nested tables and lists are flattened.
fn cell_text(cell: ElementRef) -> String {
    tidy_inline(&inline(cell))
        .replace('\n', " ")
        .replace('|', "\\|")
}

/// Collapses whitespace in each line of inline text and drops empty lines.
fn tidy_inline(text: &str) -> String {
    let lines: Vec<String> = text
        .split(LINE_BREAK)
        .map(collapse)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join("\n")
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markdown(html: &str) -> String {
        convert(html.as_bytes()).unwrap().markdown
    }

    #[test]
    fn headings_paragraphs_and_entities() {
        let converted = convert(
            b"<html><head><title>My  page</title><script>var x = 'secret';</script><style>p{}</style></head>\
              <body><h1>Fish &amp; Chips</h1><p>One\n   two&nbsp;<b>bold</b> <!-- note -->end.</p>\
              <p hidden>invisible</p><noscript>enable js</noscript><template>tpl</template></body></html>",
        )
        .unwrap();
        assert_eq!(converted.title.as_deref(), Some("My page"));
        assert_eq!(
            converted.markdown,
            "# Fish & Chips\n\nOne two **bold** end.\n"
        );
    }

    #[test]
    fn nested_lists_keep_their_levels() {
        let html = "<ul><li>Fruit<ol><li>Apple</li><li>Pear</li></ol></li><li>Veg</li></ul>";
        assert_eq!(markdown(html), "- Fruit\n  1. Apple\n  2. Pear\n- Veg\n");
    }

    #[test]
    fn tables_become_markdown_tables() {
        let html = "<table><tr><th>Name</th><th>Note</th></tr>\
                    <tr><td>a|b</td><td><table><tr><td>inner</td><td>cell</td></tr></table></td></tr>\
                    <tr><td colspan=2>wide</td></tr></table>";
        assert_eq!(
            markdown(html),
            "| Name | Note |\n| --- | --- |\n| a\\|b | inner cell |\n| wide | wide |\n"
        );
    }

    #[test]
    fn links_images_code_and_quotes() {
        let html = "<p><a href='https://example.com/x' title='X'>site</a> <a href='javascript:go()'>js</a> \
                    <img src='https://example.com/i.png' alt='logo'> <img src='data:image/png;base64,AAAA' alt='pixel'> \
                    <code>a &lt; b</code></p><pre class='language-rust'>fn main() {\n    x\n}</pre>\
                    <blockquote><p>quoted</p></blockquote><p>line<br>break</p>";
        assert_eq!(
            markdown(html),
            "[site](https://example.com/x \"X\") js ![logo](https://example.com/x.png) pixel `a < b`\n\n\
             ```rust\nfn main() {\n    x\n}\n```\n\n> quoted\n\nline\nbreak\n"
                .replace("x.png", "i.png")
        );
    }

    #[test]
    fn a_page_without_text_is_empty() {
        let error = convert(b"<html><body><script>only()</script></body></html>").unwrap_err();
        assert_eq!(error.code, ErrorCode::Empty);
    }

    #[test]
    fn a_declared_legacy_charset_is_honoured() {
        let converted = convert(b"<meta charset=\"iso-8859-2\"><p>\xB1</p>").unwrap();
        assert_eq!(converted.markdown, "\u{105}\n");
        assert_eq!(converted.properties["encoding"], "ISO-8859-2");
        assert!(converted.properties.get("warnings").is_none());
    }

    #[test]
    fn a_page_declared_utf8_that_is_not_is_read_in_the_likely_encoding_with_a_warning() {
        let page = b"<meta charset=\"utf-8\"><title>Fiche d'\xE9valuation</title>\
            <p>R\xE9union \xE0 l'h\xF4tel, caf\xE9 offert pour les comp\xE9tences.</p>";
        let converted = convert(page).unwrap();
        assert_eq!(converted.title.as_deref(), Some("Fiche d'\u{e9}valuation"));
        assert_eq!(
            converted.markdown,
            "R\u{e9}union \u{e0} l'h\u{f4}tel, caf\u{e9} offert pour les comp\u{e9}tences.\n"
        );
        assert_eq!(converted.properties["encoding"], "windows-1252");
        assert!(
            converted.properties["warnings"][0]
                .as_str()
                .unwrap()
                .contains("read as windows-1252")
        );
    }
}
