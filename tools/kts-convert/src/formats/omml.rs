//! Office Math (OMML, `m:oMath`) as LaTeX: fractions, sub- and
//! superscripts, radicals, delimiters, n-ary operators, functions, accents,
//! bars, limits, matrices and equation arrays keep their structure
//! (`\frac{km}{100}`, never `km100`); the symbols of text runs become LaTeX
//! commands (`π` is `\pi`).

use super::ooxml::Element;

/// An equation (`m:oMath` or `m:oMathPara`) as LaTeX, without delimiters.
pub fn latex(math: &Element) -> String {
    content(math)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The LaTeX of an element's children, in order.
fn content(element: &Element) -> String {
    element.elements().map(render).collect()
}

fn render(element: &Element) -> String {
    match element.name.as_str() {
        "r" => escaped(&run_text(element)),
        "f" => fraction(element),
        "sSup" => format!("{}^{{{}}}", part(element, "e"), part(element, "sup")),
        "sSub" => format!("{}_{{{}}}", part(element, "e"), part(element, "sub")),
        "sSubSup" => format!(
            "{}_{{{}}}^{{{}}}",
            part(element, "e"),
            part(element, "sub"),
            part(element, "sup")
        ),
        "sPre" => format!(
            "{{}}_{{{}}}^{{{}}}{}",
            part(element, "sub"),
            part(element, "sup"),
            part(element, "e")
        ),
        "rad" => radical(element),
        "d" => delimited(element),
        "nary" => n_ary(element),
        "func" => function(element),
        "acc" => accent(element),
        "bar" => bar(element),
        "groupChr" => group_character(element),
        "limLow" => format!(
            "\\underset{{{}}}{{{}}}",
            part(element, "lim"),
            part(element, "e")
        ),
        "limUpp" => format!(
            "\\overset{{{}}}{{{}}}",
            part(element, "lim"),
            part(element, "e")
        ),
        "m" => matrix(element),
        "eqArr" => {
            let rows: Vec<String> = children_named(element, "e").map(content).collect();
            match rows.as_slice() {
                [row] => row.clone(),
                _ => format!(
                    "\\begin{{array}}{{c}} {} \\end{{array}}",
                    rows.join(" \\\\ ")
                ),
            }
        }
        // Properties (`m:fPr`, `m:rPr`, `w:rPr`, …) are not content.
        name if name.ends_with("Pr") => String::new(),
        _ => content(element),
    }
}

/// The LaTeX of a named child (`m:num`, `m:e`, …); empty when it is absent.
fn part(element: &Element, name: &str) -> String {
    element.child(name).map(content).unwrap_or_default()
}

fn children_named<'e>(element: &'e Element, name: &'e str) -> impl Iterator<Item = &'e Element> {
    element.elements().filter(move |e| e.name == name)
}

/// A property's `m:val` (`m:chr`, `m:type`, … in the element's `…Pr`);
/// `Some("")` when the property is there without a value.
fn property<'e>(element: &'e Element, name: &str) -> Option<&'e str> {
    let properties = element.child(&format!("{}Pr", element.name))?;
    let value = properties.child(name)?;
    Some(value.attr("val").unwrap_or_default())
}

/// Whether an on/off property is on (present without a value, or `1`/`on`/`true`).
fn is_on(element: &Element, name: &str) -> bool {
    property(element, name).is_some_and(|v| !matches!(v, "0" | "off" | "false"))
}

/// The text of a run's `m:t` (or `w:t`) children.
fn run_text(run: &Element) -> String {
    children_named(run, "t").map(Element::text).collect()
}

fn fraction(element: &Element) -> String {
    let (num, den) = (part(element, "num"), part(element, "den"));
    match property(element, "type") {
        Some("lin" | "skw") => format!("{num}/{den}"),
        Some("noBar") => format!("\\genfrac{{}}{{}}{{0pt}}{{}}{{{num}}}{{{den}}}"),
        _ => format!("\\frac{{{num}}}{{{den}}}"),
    }
}

fn radical(element: &Element) -> String {
    let degree = part(element, "deg");
    let base = part(element, "e");
    if degree.trim().is_empty() || is_on(element, "degHide") {
        format!("\\sqrt{{{base}}}")
    } else {
        format!("\\sqrt[{degree}]{{{base}}}")
    }
}

/// `m:d`: its elements between `\left` and `\right` delimiters, apart by
/// its separator.
fn delimited(element: &Element) -> String {
    let begin = property(element, "begChr").unwrap_or("(");
    let end = property(element, "endChr").unwrap_or(")");
    let separator = escaped(property(element, "sepChr").unwrap_or("|"));
    let elements: Vec<String> = children_named(element, "e").map(content).collect();
    format!(
        "\\left{} {} \\right{}",
        delimiter(begin),
        elements.join(&format!(" {separator} ")),
        delimiter(end)
    )
}

fn delimiter(character: &str) -> String {
    match character {
        "" => ".".to_owned(),
        "{" | "}" => format!("\\{character}"),
        "‖" => "\\|".to_owned(),
        "⟨" | "〈" => "\\langle".to_owned(),
        "⟩" | "〉" => "\\rangle".to_owned(),
        "⌊" => "\\lfloor".to_owned(),
        "⌋" => "\\rfloor".to_owned(),
        "⌈" => "\\lceil".to_owned(),
        "⌉" => "\\rceil".to_owned(),
        other => other.to_owned(),
    }
}

/// `m:nary`: a large operator (an integral by default) with its limits.
fn n_ary(element: &Element) -> String {
    let operator = match property(element, "chr").unwrap_or("∫") {
        "∑" => "\\sum",
        "∏" => "\\prod",
        "∐" => "\\coprod",
        "∬" => "\\iint",
        "∭" => "\\iiint",
        "∮" => "\\oint",
        "∯" => "\\oiint",
        "∰" => "\\oiiint",
        "⋃" => "\\bigcup",
        "⋂" => "\\bigcap",
        "⋁" => "\\bigvee",
        "⋀" => "\\bigwedge",
        "⨁" => "\\bigoplus",
        "⨂" => "\\bigotimes",
        _ => "\\int",
    };
    let mut out = operator.to_owned();
    let (sub, sup) = (part(element, "sub"), part(element, "sup"));
    if !sub.trim().is_empty() && !is_on(element, "subHide") {
        out.push_str(&format!("_{{{sub}}}"));
    }
    if !sup.trim().is_empty() && !is_on(element, "supHide") {
        out.push_str(&format!("^{{{sup}}}"));
    }
    format!("{out} {}", part(element, "e"))
}

/// `m:func`: a function name (`\sin`, `\lim_{n}`, `\operatorname{argmax}`)
/// and its argument.
fn function(element: &Element) -> String {
    let name: String = element
        .child("fName")
        .map(|name| name.elements().map(function_name).collect())
        .unwrap_or_default();
    format!("{name}{{{}}}", part(element, "e"))
}

/// A piece of a function's name: its words as operator names, limits as
/// their sub- or superscript.
fn function_name(element: &Element) -> String {
    match element.name.as_str() {
        "r" => operator_name(&run_text(element)),
        "limLow" | "limUpp" => {
            let script = if element.name == "limLow" { '_' } else { '^' };
            let base: String = element
                .child("e")
                .into_iter()
                .flat_map(Element::elements)
                .map(function_name)
                .collect();
            format!("{base}{script}{{{}}}", part(element, "lim"))
        }
        _ => render(element),
    }
}

/// LaTeX's operator for a function's name, else `\operatorname{name}`.
fn operator_name(name: &str) -> String {
    const KNOWN: [&str; 32] = [
        "arccos", "arcsin", "arctan", "arg", "cos", "cosh", "cot", "coth", "csc", "deg", "det",
        "dim", "exp", "gcd", "hom", "inf", "ker", "lg", "lim", "liminf", "limsup", "ln", "log",
        "max", "min", "Pr", "sec", "sin", "sinh", "sup", "tan", "tanh",
    ];
    let name = name.trim();
    if name.is_empty() {
        String::new()
    } else if KNOWN.contains(&name) {
        format!("\\{name} ")
    } else {
        format!("\\operatorname{{{}}}", escaped(name))
    }
}

fn accent(element: &Element) -> String {
    let command = match property(element, "chr").unwrap_or("\u{302}") {
        "\u{303}" | "~" => "\\tilde",
        "\u{304}" | "\u{305}" | "¯" => "\\bar",
        "\u{307}" | "˙" => "\\dot",
        "\u{308}" | "¨" => "\\ddot",
        "\u{20D7}" | "→" => "\\vec",
        "\u{301}" => "\\acute",
        "\u{300}" => "\\grave",
        "\u{306}" => "\\breve",
        "\u{30C}" => "\\check",
        _ => "\\hat",
    };
    format!("{command}{{{}}}", part(element, "e"))
}

fn bar(element: &Element) -> String {
    let command = if property(element, "pos") == Some("top") {
        "\\overline"
    } else {
        "\\underline"
    };
    format!("{command}{{{}}}", part(element, "e"))
}

/// `m:groupChr`: a brace (or another character) below or above its base.
fn group_character(element: &Element) -> String {
    let base = part(element, "e");
    let character = property(element, "chr").unwrap_or("⏟");
    let on_top = property(element, "pos") == Some("top");
    match character {
        "⏟" => format!("\\underbrace{{{base}}}"),
        "⏞" => format!("\\overbrace{{{base}}}"),
        _ if on_top => format!("\\overset{{{}}}{{{base}}}", escaped(character)),
        _ => format!("\\underset{{{}}}{{{base}}}", escaped(character)),
    }
}

fn matrix(element: &Element) -> String {
    let rows: Vec<String> = children_named(element, "mr")
        .map(|row| {
            children_named(row, "e")
                .map(content)
                .collect::<Vec<_>>()
                .join(" & ")
        })
        .collect();
    format!("\\begin{{matrix}} {} \\end{{matrix}}", rows.join(" \\\\ "))
}

/// A run's text for LaTeX: its special characters escaped, its symbols as
/// commands (each followed by a space, so a letter after one stays apart).
fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\backslash "),
            '{' | '}' | '%' | '#' | '&' | '$' | '_' => {
                out.push('\\');
                out.push(c);
            }
            c => match symbol(c) {
                Some(command) => {
                    out.push_str(command);
                    out.push(' ');
                }
                None => out.push(c),
            },
        }
    }
    out
}

/// The LaTeX command of a mathematical symbol or Greek letter.
fn symbol(c: char) -> Option<&'static str> {
    Some(match c {
        'α' => "\\alpha",
        'β' => "\\beta",
        'γ' => "\\gamma",
        'δ' => "\\delta",
        'ε' => "\\varepsilon",
        'ϵ' => "\\epsilon",
        'ζ' => "\\zeta",
        'η' => "\\eta",
        'θ' => "\\theta",
        'ϑ' => "\\vartheta",
        'ι' => "\\iota",
        'κ' => "\\kappa",
        'λ' => "\\lambda",
        'μ' => "\\mu",
        'ν' => "\\nu",
        'ξ' => "\\xi",
        'π' => "\\pi",
        'ϖ' => "\\varpi",
        'ρ' => "\\rho",
        'σ' => "\\sigma",
        'ς' => "\\varsigma",
        'τ' => "\\tau",
        'υ' => "\\upsilon",
        'φ' => "\\varphi",
        'ϕ' => "\\phi",
        'χ' => "\\chi",
        'ψ' => "\\psi",
        'ω' => "\\omega",
        'Γ' => "\\Gamma",
        'Δ' => "\\Delta",
        'Θ' => "\\Theta",
        'Λ' => "\\Lambda",
        'Ξ' => "\\Xi",
        'Π' => "\\Pi",
        'Σ' => "\\Sigma",
        'Υ' => "\\Upsilon",
        'Φ' => "\\Phi",
        'Ψ' => "\\Psi",
        'Ω' => "\\Omega",
        '∞' => "\\infty",
        '±' => "\\pm",
        '∓' => "\\mp",
        '×' => "\\times",
        '÷' => "\\div",
        '⋅' | '·' => "\\cdot",
        '∘' => "\\circ",
        '≤' => "\\leq",
        '≥' => "\\geq",
        '≠' => "\\neq",
        '≈' => "\\approx",
        '≡' => "\\equiv",
        '∼' => "\\sim",
        '≅' => "\\cong",
        '∝' => "\\propto",
        '≪' => "\\ll",
        '≫' => "\\gg",
        '→' => "\\rightarrow",
        '←' => "\\leftarrow",
        '↔' => "\\leftrightarrow",
        '⇒' => "\\Rightarrow",
        '⇐' => "\\Leftarrow",
        '⇔' => "\\Leftrightarrow",
        '↦' => "\\mapsto",
        '∈' => "\\in",
        '∉' => "\\notin",
        '∋' => "\\ni",
        '⊂' => "\\subset",
        '⊃' => "\\supset",
        '⊆' => "\\subseteq",
        '⊇' => "\\supseteq",
        '∪' => "\\cup",
        '∩' => "\\cap",
        '∅' => "\\emptyset",
        '∀' => "\\forall",
        '∃' => "\\exists",
        '¬' => "\\neg",
        '∧' => "\\wedge",
        '∨' => "\\vee",
        '⊕' => "\\oplus",
        '⊗' => "\\otimes",
        '∂' => "\\partial",
        '∇' => "\\nabla",
        '…' => "\\ldots",
        '⋯' => "\\cdots",
        '⋮' => "\\vdots",
        '⋱' => "\\ddots",
        '′' => "\\prime",
        '°' => "\\degree",
        'ℏ' => "\\hbar",
        'ℓ' => "\\ell",
        '∠' => "\\angle",
        '⊥' => "\\perp",
        '∥' => "\\parallel",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latex_of(omml: &str) -> String {
        let xml = format!(
            r#"<m:oMath xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math">{omml}</m:oMath>"#
        );
        latex(&Element::parse(xml.as_bytes()).unwrap())
    }

    fn run(text: &str) -> String {
        format!("<m:r><m:t>{text}</m:t></m:r>")
    }

    #[test]
    fn fractions_keep_numerator_and_denominator_apart() {
        let fraction = format!(
            "{}<m:f><m:num>{}</m:num><m:den>{}</m:den></m:f>",
            run("A="),
            run("km"),
            run("100")
        );
        assert_eq!(latex_of(&fraction), r"A=\frac{km}{100}");
        let linear = format!(
            r#"<m:f><m:fPr><m:type m:val="lin"/></m:fPr><m:num>{}</m:num><m:den>{}</m:den></m:f>"#,
            run("a"),
            run("b")
        );
        assert_eq!(latex_of(&linear), "a/b");
    }

    #[test]
    fn scripts_radicals_and_delimiters() {
        let quadratic = format!(
            "{}<m:f><m:num>{}<m:rad><m:radPr><m:degHide m:val=\"1\"/></m:radPr><m:deg/><m:e><m:sSup><m:e>{}</m:e><m:sup>{}</m:sup></m:sSup>{}</m:e></m:rad></m:num><m:den>{}</m:den></m:f>",
            run("x="),
            run("-b±"),
            run("b"),
            run("2"),
            run("-4ac"),
            run("2a")
        );
        assert_eq!(latex_of(&quadratic), r"x=\frac{-b\pm \sqrt{b^{2}-4ac}}{2a}");
        let sum = format!(
            r#"<m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr><m:sub>{}</m:sub><m:sup>{}</m:sup><m:e><m:sSub><m:e>{}</m:e><m:sub>{}</m:sub></m:sSub></m:e></m:nary>"#,
            run("n=1"),
            run("∞"),
            run("a"),
            run("n")
        );
        assert_eq!(latex_of(&sum), r"\sum_{n=1}^{\infty } a_{n}");
        let braces = format!(
            r#"<m:d><m:dPr><m:begChr m:val="{{"/><m:endChr m:val=""/></m:dPr><m:e>{}</m:e><m:e>{}</m:e></m:d>"#,
            run("x"),
            run("y")
        );
        assert_eq!(latex_of(&braces), r"\left\{ x | y \right.");
    }

    #[test]
    fn equation_arrays_and_matrices_keep_their_rows() {
        let rows = |tag: &str, rows: &[&str]| -> String {
            rows.iter()
                .map(|r| format!("<m:{tag}>{}</m:{tag}>", run(r)))
                .collect()
        };
        assert_eq!(
            latex_of(&format!("<m:eqArr>{}</m:eqArr>", rows("e", &["x=1"]))),
            "x=1"
        );
        assert_eq!(
            latex_of(&format!(
                "<m:eqArr>{}</m:eqArr>",
                rows("e", &["x=1", "y=2"])
            )),
            r"\begin{array}{c} x=1 \\ y=2 \end{array}"
        );
        let matrix = format!(
            "<m:m><m:mr>{}</m:mr><m:mr>{}</m:mr></m:m>",
            rows("e", &["a", "b"]),
            rows("e", &["c", "d"])
        );
        assert_eq!(
            latex_of(&matrix),
            r"\begin{matrix} a & b \\ c & d \end{matrix}"
        );
    }

    #[test]
    fn functions_take_operator_names() {
        let function = |name: &str| {
            format!(
                "<m:func><m:fName>{name}</m:fName><m:e><m:d><m:e>{}</m:e></m:d></m:e></m:func>",
                run("x")
            )
        };
        assert_eq!(latex_of(&function(&run("log"))), r"\log {\left( x \right)}");
        assert_eq!(
            latex_of(&function(&run("argmax"))),
            r"\operatorname{argmax}{\left( x \right)}"
        );
        let limit = format!(
            "<m:limLow><m:e>{}</m:e><m:lim>{}</m:lim></m:limLow>",
            run("lim"),
            run("n→∞")
        );
        assert_eq!(
            latex_of(&function(&limit)),
            r"\lim _{n\rightarrow \infty }{\left( x \right)}"
        );
    }
}
