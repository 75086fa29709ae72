//! Spreadsheet number formats (`0.0%`, `#,##0.00`, `"$"#,##0.00`,
//! `[$€-407] #,##0.00`): a number as the spreadsheet shows it.
//!
//! The common cases are rendered: percentages, fixed and optional decimals,
//! thousands separators, literal text and currency symbols before or after
//! the number, and the sections for negative numbers and zero. Any other
//! format (General, scientific, fractions, conditions, text between digits,
//! scaling by thousands) is `None` when parsed, and the caller shows the
//! plain value. Numbers are shown with `,` between thousands and `.` before
//! the decimals, as the format codes are written.

/// A parsed number format: its sections for positive numbers, negative
/// numbers and zero (a text section is not needed for numbers).
#[derive(Clone, Debug, PartialEq)]
pub struct NumberFormat {
    sections: Vec<Section>,
}

/// One section of a format: literal text around one number.
#[derive(Clone, Debug, Default, PartialEq)]
struct Section {
    prefix: String,
    suffix: String,
    /// Whether the section shows the number at all (it has digit placeholders).
    has_digits: bool,
    min_integer_digits: usize,
    grouped: bool,
    min_decimals: usize,
    max_decimals: usize,
    /// How many `%` signs: each multiplies the value by 100.
    percent: i32,
}

/// The format code of one of Excel's built-in number formats that is not a
/// date. Formats 5 to 8 and 41 to 44 depend on the locale; these are the
/// United States ones, which Excel writes when no locale says otherwise.
pub fn builtin_code(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "0",
        2 => "0.00",
        3 => "#,##0",
        4 => "#,##0.00",
        5 => r##""$"#,##0_);("$"#,##0)"##,
        6 => r##""$"#,##0_);[Red]("$"#,##0)"##,
        7 => r##""$"#,##0.00_);("$"#,##0.00)"##,
        8 => r##""$"#,##0.00_);[Red]("$"#,##0.00)"##,
        9 => "0%",
        10 => "0.00%",
        37 => "#,##0_);(#,##0)",
        38 => "#,##0_);[Red](#,##0)",
        39 => "#,##0.00_);(#,##0.00)",
        40 => "#,##0.00_);[Red](#,##0.00)",
        41 => r##"_(* #,##0_);_(* \(#,##0\);_(* "-"_);_(@_)"##,
        42 => r##"_("$"* #,##0_);_("$"* \(#,##0\);_("$"* "-"_);_(@_)"##,
        43 => r##"_(* #,##0.00_);_(* \(#,##0.00\);_(* "-"??_);_(@_)"##,
        44 => r##"_("$"* #,##0.00_);_("$"* \(#,##0.00\);_("$"* "-"??_);_(@_)"##,
        _ => return None,
    })
}

impl NumberFormat {
    /// Parses a format code; `None` for General and for the formats this
    /// module does not render.
    pub fn parse(code: &str) -> Option<Self> {
        let sections = split_sections(code)
            .into_iter()
            .take(3)
            .map(parse_section)
            .collect::<Option<Vec<_>>>()?;
        sections
            .iter()
            .any(|s| s.has_digits)
            .then_some(Self { sections })
    }

    /// The value as the format shows it; `None` when the format shows
    /// nothing for it (an empty section) or the value is out of reach.
    pub fn render(&self, value: f64) -> Option<String> {
        if !value.is_finite() {
            return None;
        }
        let (section, sign) = match (self.sections.as_slice(), value) {
            ([.., zero], v) if v == 0.0 && self.sections.len() >= 3 => (zero, ""),
            ([_, negative, ..], v) if v < 0.0 => (negative, ""),
            ([only, ..], v) if v < 0.0 => (only, "-"),
            ([positive, ..], _) => (positive, ""),
            ([], _) => return None,
        };
        if !section.has_digits {
            let text = format!("{}{}", section.prefix, section.suffix);
            let text = text.trim();
            return (!text.is_empty()).then(|| text.to_owned());
        }
        let number = section.number(value.abs())?;
        let sign = if number.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
            sign
        } else {
            ""
        };
        let text = format!("{}{sign}{number}{}", section.prefix, section.suffix);
        Some(text.trim().to_owned())
    }
}

impl Section {
    /// A non-negative value's digits, rounded as the section says.
    fn number(&self, value: f64) -> Option<String> {
        let scaled = value * 100f64.powi(self.percent) * 10f64.powi(self.max_decimals as i32);
        // Rounded to 15 significant digits first, as spreadsheets compute,
        // so that 2.675 shows as 2.68 although its binary value is below.
        let rounded = significant_15(scaled).round();
        if !rounded.is_finite() || rounded >= 1e300 {
            return None;
        }
        let mut digits = format!("{rounded:.0}");
        if digits.len() <= self.max_decimals {
            digits = format!("{digits:0>width$}", width = self.max_decimals + 1);
        }
        let (integer, decimals) = digits.split_at(digits.len() - self.max_decimals);
        let mut decimals = decimals.to_owned();
        while decimals.len() > self.min_decimals && decimals.ends_with('0') {
            decimals.pop();
        }
        let integer = integer.trim_start_matches('0');
        let integer = format!("{integer:0>width$}", width = self.min_integer_digits);
        let integer = if self.grouped {
            group_thousands(&integer)
        } else {
            integer
        };
        Some(if decimals.is_empty() {
            integer
        } else {
            format!("{integer}.{decimals}")
        })
    }
}

fn significant_15(value: f64) -> f64 {
    format!("{value:.14e}").parse().unwrap_or(value)
}

/// `1234567` as `1,234,567`.
fn group_thousands(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The sections of a code, split at the `;` outside quotes and brackets.
fn split_sections(code: &str) -> Vec<&str> {
    let mut sections = Vec::new();
    let (mut start, mut quoted, mut bracketed, mut escaped) = (0, false, false, false);
    for (i, c) in code.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '"' => quoted = !quoted,
            _ if quoted => {}
            '\\' | '_' | '*' => escaped = true,
            '[' => bracketed = true,
            ']' => bracketed = false,
            ';' if !bracketed => {
                sections.push(&code[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    sections.push(&code[start..]);
    sections
}

/// One section's literals and number layout; `None` when it holds what
/// this module does not render.
fn parse_section(code: &str) -> Option<Section> {
    let mut section = Section::default();
    let mut chars = code.chars().peekable();
    let mut in_decimals = false;
    let mut literal_after_digits = false;
    while let Some(c) = chars.next() {
        let literal = match c {
            '0' | '#' | '?' => {
                if literal_after_digits {
                    return None;
                }
                section.has_digits = true;
                if in_decimals {
                    section.max_decimals += 1;
                    section.min_decimals = if c == '0' {
                        section.max_decimals
                    } else {
                        section.min_decimals
                    };
                } else if c == '0' {
                    section.min_integer_digits += 1;
                }
                continue;
            }
            '.' if !in_decimals && !literal_after_digits => {
                in_decimals = true;
                section.has_digits = true;
                continue;
            }
            ',' if section.has_digits
                && !in_decimals
                && chars.peek().is_some_and(|n| matches!(n, '0' | '#' | '?')) =>
            {
                section.grouped = true;
                continue;
            }
            '%' => {
                section.percent += 1;
                "%".to_owned()
            }
            '"' => chars.by_ref().take_while(|&q| q != '"').collect(),
            '\\' => chars.next()?.to_string(),
            '_' | '*' => {
                chars.next()?;
                continue;
            }
            '[' => {
                let bracket: String = chars.by_ref().take_while(|&b| b != ']').collect();
                bracket_literal(&bracket)?
            }
            ' ' | '$' | '-' | '+' | '(' | ')' | ':' | '!' | '^' | '&' | '\'' | '~' | '{' | '}'
            | '<' | '>' | '=' => c.to_string(),
            c if !c.is_ascii() => c.to_string(),
            _ => return None,
        };
        if section.has_digits {
            section.suffix.push_str(&literal);
            literal_after_digits = true;
        } else {
            section.prefix.push_str(&literal);
        }
    }
    Some(section)
}

/// What a `[...]` shows: a currency symbol (`[$€-407]` is `€`), nothing for
/// a colour or a locale alone; `None` for conditions, elapsed times and the
/// rest.
fn bracket_literal(bracket: &str) -> Option<String> {
    if let Some(currency) = bracket.strip_prefix('$') {
        let symbol = currency.split('-').next().unwrap_or_default();
        return Some(symbol.to_owned());
    }
    const COLOURS: [&str; 8] = [
        "black", "blue", "cyan", "green", "magenta", "red", "white", "yellow",
    ];
    let lower = bracket.to_ascii_lowercase();
    (COLOURS.contains(&lower.as_str()) || lower.starts_with("color")).then(String::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(code: &str, value: f64) -> Option<String> {
        NumberFormat::parse(code)?.render(value)
    }

    #[test]
    fn percentages_decimals_thousands_and_currencies() {
        let cases: [(&str, f64, &str); 14] = [
            ("0%", 0.25, "25%"),
            ("0.00%", 0.0725, "7.25%"),
            ("0.0%", 1.5, "150.0%"),
            ("0.0%", 0.256, "25.6%"),
            (r##""$"#,##0.00"##, 1234.5, "$1,234.50"),
            ("#,##0", 1234567.0, "1,234,567"),
            ("0.00", 1.23456, "1.23"),
            ("0.00", 2.675, "2.68"),
            ("[$€-407] #,##0.00", 99.9, "€ 99.90"),
            ("#,##0.00 [$€-407]", -99.9, "-99.90 €"),
            ("0.0#", 1.5, "1.5"),
            ("000", 7.0, "007"),
            (r#"0.0 "kg""#, 12.25, "12.3 kg"),
            ("[Red]0.00", 1.0, "1.00"),
        ];
        for (code, value, shown) in cases {
            assert_eq!(show(code, value).as_deref(), Some(shown), "{code} {value}");
        }
    }

    #[test]
    fn negative_and_zero_sections() {
        let accounting = builtin_code(44).unwrap();
        assert_eq!(show(accounting, 1234.5).as_deref(), Some("$1,234.50"));
        assert_eq!(show(accounting, -1234.5).as_deref(), Some("$(1,234.50)"));
        assert_eq!(show(accounting, 0.0).as_deref(), Some("$-"));
        assert_eq!(show("#,##0_);[Red](#,##0)", -5.0).as_deref(), Some("(5)"));
        assert_eq!(show("0.00", -0.001).as_deref(), Some("0.00"));
        assert_eq!(show("0;-0;;@", 0.0), None);
    }

    #[test]
    fn other_formats_are_left_to_the_plain_value() {
        for code in [
            "General",
            "0.00E+00",
            "# ?/?",
            "000-00-0000",
            "#,##0,\"K\"",
            "[>=100]0;0",
            "@",
            "yyyy-mm-dd",
            "[h]:mm",
        ] {
            assert_eq!(NumberFormat::parse(code), None, "{code}");
        }
    }
}
