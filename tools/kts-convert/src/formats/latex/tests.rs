use std::time::{Duration, Instant};

use super::*;

fn markdown(source: &str) -> String {
    convert(source.as_bytes()).unwrap().markdown
}

fn document(body: &str) -> String {
    markdown(&format!(
        "\\documentclass{{article}}\n\\begin{{document}}\n{body}\n\\end{{document}}\n"
    ))
}

#[test]
fn the_preamble_gives_title_authors_and_date_and_is_dropped() {
    let source = "\\documentclass{article}\n\\usepackage{amsmath}\n\\title{Pump \\emph{Maintenance}}\n\
        \\author{Ann Lee\\thanks{Plant 4.} \\\\ Acme \\and Bo Chan}\n\\date{March 2024}\n\
        \\begin{document}\n\\maketitle\nText.\n\\end{document}\nafter the end\n";
    let converted = convert(source.as_bytes()).unwrap();
    assert_eq!(converted.title.as_deref(), Some("Pump *Maintenance*"));
    assert_eq!(converted.properties["author"], "Ann Lee, Bo Chan");
    assert_eq!(converted.properties["date"], "March 2024");
    assert_eq!(
        converted.markdown,
        "# Pump *Maintenance*\n\nAnn Lee[^1]\nAcme\n\nBo Chan\n\nMarch 2024\n\nText.\n\n[^1]: Plant 4.\n"
    );
}

#[test]
fn sectioning_commands_become_headings_below_the_title() {
    let md = document(
        "\\section{Scope}\nA.\n\\subsection*{Parts}\nB.\n\\subsubsection[short]{Seals}\n\\paragraph{Note.} C.",
    );
    assert_eq!(
        md,
        "## Scope\n\nA.\n\n### Parts\n\nB.\n\n#### Seals\n\n##### Note.\n\nC.\n"
    );
    let book = document("\\chapter{One}\n\\section{Two}\nText.");
    assert_eq!(book, "## One\n\n### Two\n\nText.\n");
}

#[test]
fn a_file_without_a_preamble_is_all_body() {
    assert_eq!(
        markdown("\\section{Intro}\nSee below.\n"),
        "## Intro\n\nSee below.\n"
    );
}

#[test]
fn comments_are_dropped_but_escaped_percent_signs_kept() {
    let md = document("Rate is 5\\% % not this\nper day.%\n% a whole line\ncontinued\n\n%\nNext.");
    assert_eq!(md, "Rate is 5% per day.continued\n\nNext.\n");
}

#[test]
fn text_commands_become_their_text() {
    let md = document(
        "\\emph{a} \\textbf{b} \\texttt{c} \\textsc{Small} \\unknown{kept} \\textcolor{red}{red}\\\\\n\
         x~y -- z --- w ``q'' \\ldots{} \\LaTeX{} \\& \\_ \\$ \\# \\{\\}\\par\n\
         Caf\\'e na\\\"ive \\c{c} {\\o}re \\v{s} \\'{\\i} \\ss{} \\AA ngstr\\\"{o}m",
    );
    assert_eq!(
        md,
        "*a* **b** `c` Small kept red\nx y – z — w “q” … LaTeX & _ $ # {}\n\nCafé naïve ç øre š í ß Å ngström\n"
    );
}

#[test]
fn citations_references_links_and_footnotes() {
    let md = document(
        "See \\cite[p.~4]{knuth84, lamport94} and Section~\\ref{sec:a}.\\label{x} \
         \\url{https://example.com/a%20b} \\href{https://kts.dev}{the site}.\\footnote{A \\emph{note}.}\n\
         \\section{Next}\nMore.",
    );
    assert_eq!(
        md,
        "See [knuth84, lamport94] and Section [sec:a]. <https://example.com/a%20b> [the site](https://kts.dev).[^1]\n\n\
         [^1]: A *note*.\n\n## Next\n\nMore.\n"
    );
}

#[test]
fn lists_nest_and_number() {
    let md = document(
        "\\begin{itemize}\n\\item One\n\\begin{enumerate}\n\\item Sub \\emph{a}\n\\item Sub b\n\\end{enumerate}\n\
         \\item[$\\star$] Two\n\\end{itemize}\n\\begin{description}\n\\item[Pump] moves water.\n\\end{description}",
    );
    assert_eq!(
        md,
        "- One\n\n  1. Sub *a*\n  2. Sub b\n- $\\star$ Two\n\n- **Pump** moves water.\n"
    );
}

#[test]
fn tables_become_markdown_tables_with_their_captions() {
    let md = document(
        "\\begin{table}[h]\n\\caption{Limits}\\label{t}\n\\resizebox{\\linewidth}{!}{\n\
         \\begin{tabular}{|l|c|}\n\\hline\n\\multicolumn{2}{c}{Costs} \\\\ \\toprule\nItem & Cost \\\\\\midrule\n\
         Hotel \\& bar & 200 \\\\\n\\cline{1-2}\nMeals & \\textbf{60} \\\\\n\\bottomrule\n\\end{tabular}}\n\\end{table}\n\
         \\begin{tabularx}{\\textwidth}{lX}\na & b\\\\ c & d\n\\end{tabularx}",
    );
    assert_eq!(
        md,
        "Table: Limits\n\n| Costs | Costs |\n| --- | --- |\n| Item | Cost |\n| Hotel & bar | 200 |\n| Meals | **60** |\n\n\
         | a | b |\n| --- | --- |\n| c | d |\n"
    );
}

#[test]
fn figures_keep_their_captions() {
    let md = document(
        "\\begin{figure}\n\\centering\n\\includegraphics[width=\\linewidth]{plot.pdf}\n\\caption{Flow over \\emph{time}.}\n\\end{figure}",
    );
    assert_eq!(md, "Figure: Flow over *time*.\n");
}

#[test]
fn display_math_becomes_math_blocks_and_inline_math_stays() {
    let md = document(
        "Energy $E = mc^2$ holds.\n\\begin{equation}\\label{e}\na = b\n\\end{equation}\n\
         $$x^2$$\n\\[ y \\]\n\\begin{align*}\nf &= g \\\\\nh &= i\n\\end{align*}",
    );
    assert_eq!(
        md,
        "Energy $E = mc^2$ holds.\n\n$$\na = b\n$$\n\n$$\nx^2\n$$\n\n$$\ny\n$$\n\n\
         $$\n\\begin{aligned}\nf &= g \\\\\nh &= i\n\\end{aligned}\n$$\n"
    );
}

#[test]
fn code_is_fenced_and_kept_as_written() {
    let md = document(
        "Run \\verb|rm -rf %TMP%| now.\n\\begin{lstlisting}[language=Python]\nx = {1: 2}  # 100% \\emph{raw}\n\
         \\end{lstlisting}\n\\begin{minted}{rust}\nfn main() {}\n\\end{minted}\n\\begin{verbatim}\n  a  b\n\\end{verbatim}",
    );
    assert_eq!(
        md,
        "Run `rm -rf %TMP%` now.\n\n```python\nx = {1: 2}  # 100% \\emph{raw}\n```\n\n```rust\nfn main() {}\n```\n\n```\n  a  b\n```\n"
    );
}

#[test]
fn quotes_abstracts_theorems_and_the_bibliography() {
    let md = document(
        "\\begin{abstract}\nWe study pumps.\n\\end{abstract}\n\\begin{quote}\nSaid.\n\nTwice.\n\\end{quote}\n\
         \\begin{theorem}[Flow]\nIt flows.\n\\end{theorem}\n\
         \\begin{thebibliography}{9}\n\\bibitem{knuth84} D. Knuth. \\newblock \\emph{The TeXbook}.\n\\bibitem[L94]{lamport} L. Lamport.\n\\end{thebibliography}",
    );
    assert_eq!(
        md,
        "## Abstract\n\nWe study pumps.\n\n> Said.\n>\n> Twice.\n\n**Theorem (Flow).** It flows.\n\n\
         ## References\n\n- [knuth84] D. Knuth. *The TeXbook*.\n- [L94] L. Lamport.\n"
    );
}

#[test]
fn included_files_are_named_not_read() {
    let converted =
        convert(b"\\section{A}\n\\input{chapters/intro}\n\\include{appendix.tex}\n").unwrap();
    assert_eq!(
        converted.markdown,
        "## A\n\n[included file: chapters/intro.tex]\n\n[included file: appendix.tex]\n"
    );
    assert_eq!(
        converted.properties["warnings"][0],
        "\\input{chapters/intro.tex} is not followed (only the file itself is read)"
    );
}

#[test]
fn user_macros_are_expanded() {
    let md = markdown(
        "\\documentclass{article}\n\\newcommand{\\product}{Stormbox}\n\\newcommand{\\pair}[2]{#1 and #2}\n\
         \\newcommand{\\opt}[1][north]{#1 side}\n\\def\\co{Acme~Corp}\n\\DeclareMathOperator{\\rank}{rank}\n\
         \\begin{document}\n\\product{} by \\co: \\pair{a}{\\product}, \\opt, \\opt[south], $\\rank A$.\n\\end{document}",
    );
    assert_eq!(
        md,
        "Stormbox by Acme Corp: a and Stormbox, north side, south side, $\\operatorname{rank} A$.\n"
    );
}

#[test]
fn an_unknown_macro_with_an_empty_group_keeps_its_name() {
    // A section file: its macros are defined in the main file.
    let md = markdown(
        "\\section{Results}\nAt 14~\\kn{} the drag fell. We used the \\ourtool{} pipeline.\n\
         \\unknown{kept} \\other text.\\mbox{}\\hfill{} Done\\noindent{} \\textbf{} today.",
    );
    assert_eq!(
        md,
        "## Results\n\nAt 14 kn the drag fell. We used the ourtool pipeline. kept text. Done today.\n"
    );
}

#[test]
fn dropped_regions_leave_nothing() {
    let md = document(
        "A\n\\iffalse\nhidden \\ifx a b \\fi still hidden\n\\fi\nB\n\\begin{comment}\nhidden\n\\end{comment}\n\
         \\begin{tikzpicture}\\draw (0,0) -- (1,1);\\end{tikzpicture}\nC",
    );
    assert_eq!(md, "A B\n\nC\n");
}

#[test]
fn hostile_sources_convert_in_bounded_time() {
    let cases = [
        "\\newcommand{\\a}{\\a}\\a".to_string(),
        "\\newcommand{\\a}{\\a\\a}\\a".to_string(),
        "\\def\\b#1{\\b{#1#1}}\\b{x}".to_string(),
        "{".repeat(200_000) + "deep",
        "\\begin{itemize}\\item ".repeat(20_000),
        "\\begin{tabular}{l}".repeat(20_000) + "a & b \\\\",
        format!("\\section{{{}", "word ".repeat(2_000_000)),
        "x".repeat(50 << 20),
        "$ \\cite{ [ ".repeat(100_000),
        "\\verb".repeat(100_000),
        "\\x[{".repeat(1_000_000),
        "\\(".repeat(1_000_000),
        "\\def\\a".repeat(1_000_000),
        "\\author{".repeat(1_000_000),
        ('\u{100}'..'\u{2000}')
            .map(|c| format!("\\verb{c}"))
            .collect::<String>()
            .repeat(100),
        "\\begin{document}\\begin{figure}\\caption{unclosed".to_string(),
    ];
    for source in cases {
        let started = Instant::now();
        let converted = convert(source.as_bytes());
        assert!(converted.is_ok());
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{} took {:?}",
            &source[..40.min(source.len())],
            started.elapsed()
        );
    }
}

#[test]
fn accented_letters_compose() {
    for (_, letters, accented) in inline::ACCENTED {
        assert_eq!(
            letters.chars().count(),
            accented.chars().count(),
            "{letters}"
        );
    }
}
