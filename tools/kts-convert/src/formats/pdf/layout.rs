//! A page's glyphs laid out as lines of text, each with the font size most
//! of its glyphs are drawn at.
//!
//! The rules are pdf-extract's plain-text ones (a move down starts a line, a
//! large one leaves a blank line, a gap along the line is a space), but for
//! what counts as large (see `starts_paragraph`), applied
//! in the frame of the text's own direction: rotated text, such as a chart's
//! axis label or a margin note, reads along its own baseline, and a change of
//! direction starts a paragraph.

/// Two glyphs whose baselines differ by more than about 10 degrees run in
/// different directions (slightly tilted text, as in a skewed scan's text
/// layer or along an arc, still reads as one line).
const SAME_DIRECTION_COS: f64 = 0.985;

/// A line of text as drawn on the page.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Line {
    pub text: String,
    /// The font size, in points on the page, of most of the line's glyphs
    /// (0 where unknown).
    pub size: f64,
    /// The Markdown heading level, once the line is known to be a heading.
    pub heading: Option<usize>,
}

impl Line {
    /// A line of text whose glyphs are not known.
    pub fn plain(text: &str) -> Line {
        Line {
            text: text.to_string(),
            ..Line::default()
        }
    }
}

/// Where the previous glyph was drawn, in page space with y downwards.
#[derive(Clone, Copy)]
struct Pen {
    /// The baseline direction (a unit vector).
    direction: (f64, f64),
    origin: (f64, f64),
    /// Where the glyph's advance ends.
    end: (f64, f64),
}

/// A glyph's place: along its baseline and down across it, in the frame of
/// `direction`.
fn project(point: (f64, f64), direction: (f64, f64)) -> (f64, f64) {
    let (dx, dy) = direction;
    (point.0 * dx + point.1 * dy, point.1 * dx - point.0 * dy)
}

/// Where a line sits relative to the line before it, for telling a
/// paragraph's gap from the spacing of its lines.
#[derive(Clone, Copy, Default)]
struct Placement {
    /// How far below the line before it its baseline is, when it starts back
    /// towards the left (None for the page's first line or a new direction).
    drop: Option<f64>,
    /// Whether that is more than single spacing: 1.5 times the size of the
    /// glyph that starts the line (pdf-extract's rule for a blank line).
    wide: bool,
    /// Whether a gap along the line is wider than twice the font size (table
    /// cells, tab stops): such lines are no wrapped prose.
    spread: bool,
    /// Where its first glyph starts and its last ends, along the baseline.
    left: Option<f64>,
    right: f64,
}

/// The lines of a page, built as pdf-extract hands over the glyphs.
#[derive(Default)]
pub struct PageLayout {
    lines: Vec<(Line, Placement)>,
    text: String,
    placement: Placement,
    /// The width of the page's media box (0 until the page begins).
    page_width: f64,
    /// Glyph counts per font size on the current line.
    sizes: Vec<(f64, usize)>,
    pen: Option<Pen>,
    word_start: bool,
    pub glyphs: usize,
}

impl PageLayout {
    /// The page's lines, with a blank line before each that starts a paragraph.
    pub fn into_lines(mut self) -> Vec<Line> {
        self.end_line();
        let margin = self
            .lines
            .iter()
            .filter(|(line, _)| !line.text.trim().is_empty())
            .map(|(_, placement)| placement.right)
            .fold(f64::MIN, f64::max);
        let starts: Vec<bool> = (0..self.lines.len())
            .map(|i| starts_paragraph(&self.lines, i, margin, self.page_width))
            .collect();
        let mut lines = Vec::with_capacity(self.lines.len());
        for ((line, _), starts) in self.lines.into_iter().zip(starts) {
            if starts {
                lines.push(Line::default());
            }
            lines.push(line);
        }
        lines
    }

    fn end_line(&mut self) {
        let size = self
            .sizes
            .iter()
            .max_by_key(|(_, count)| *count)
            .map_or(0.0, |(size, _)| *size);
        if let Some(pen) = self.pen {
            self.placement.right = project(pen.end, pen.direction).0;
        }
        let line = Line {
            text: std::mem::take(&mut self.text),
            size,
            heading: None,
        };
        self.lines.push((line, std::mem::take(&mut self.placement)));
        self.sizes.clear();
    }

    /// Puts a line break, a blank line or a space between the previous
    /// glyph and one drawn at `origin` at `size` along `direction`.
    fn separate(&mut self, pen: Pen, origin: (f64, f64), size: f64, direction: (f64, f64)) {
        let along_baseline = pen.direction.0 * direction.0 + pen.direction.1 * direction.1;
        if along_baseline < SAME_DIRECTION_COS {
            self.end_line();
            self.end_line();
            return;
        }
        let (x, y) = project(origin, direction);
        let (last_end, _) = project(pen.end, direction);
        let (_, last_y) = project(pen.origin, direction);
        let drop = (y - last_y).abs();
        let back_left = x < last_end;
        if drop > size * 1.5 || (back_left && drop > size * 0.5) {
            self.end_line();
            self.placement.drop = back_left.then_some(drop);
            self.placement.wide = back_left && drop > size * 1.5;
        } else if x > last_end + size * 2.0 {
            self.placement.spread = true;
        }
        // A jump back along the same line (text drawn out of order) is a
        // word break; a small one is kerning or an accent over its letter.
        if x > last_end + size * 0.1 || (x < last_end - size && drop <= size * 0.5) {
            self.text.push(' ');
        }
    }

    fn count_size(&mut self, size: f64, char: &str) {
        if char.trim().is_empty() {
            return;
        }
        let size = (size * 2.0).round() / 2.0;
        match self.sizes.iter_mut().find(|(s, _)| *s == size) {
            Some((_, count)) => *count += 1,
            None => self.sizes.push((size, 1)),
        }
    }
}

/// Adds a glyph's text to its line. A right-to-left line is reversed
/// character by character later (see `logical_order`), but a glyph drawn for
/// several characters (a lam-alef ligature, a letter with its vowel mark)
/// holds them in logical order already: they are added reversed, so as to
/// come out right.
fn push_glyph_text(line: &mut String, text: &str) {
    if text.chars().nth(1).is_some() && text.chars().any(super::is_rtl) {
        line.extend(text.chars().rev());
    } else {
        line.push_str(text);
    }
}

/// Whether line `i` starts a paragraph. It does when it is more than single
/// spacing (1.5 times its font size) below the line before, unless that gap
/// is the spacing of double-spaced prose around it: at most 3 times the font
/// size, as wide as the gaps next to it, after a line in the same size that is
/// long (half the page wide at least, and ending near the `margin`, the right
/// end of the page's longest line) and ends no sentence, and before a line
/// that is not indented, neither line spread out as a table's row is.
fn starts_paragraph(lines: &[(Line, Placement)], i: usize, margin: f64, page_width: f64) -> bool {
    const SAME_SPACING: f64 = 1.2;
    let (line, placement) = &lines[i];
    let Some(drop) = placement.drop.filter(|_| placement.wide) else {
        return false;
    };
    let Some((line_before, before)) = i.checked_sub(1).map(|b| &lines[b]) else {
        return true;
    };
    let neighbours = [Some(before), lines.get(i + 1).map(|(_, p)| p)];
    let Some(spacing) = neighbours
        .into_iter()
        .flatten()
        .filter_map(|p| p.drop)
        .min_by(f64::total_cmp)
    else {
        return true;
    };
    let other_spacing =
        drop > line.size * 3.0 || drop > spacing * SAME_SPACING || drop * SAME_SPACING < spacing;
    let other_size = (line.size - line_before.size).abs() > 0.5;
    let width = before.left.map_or(0.0, |left| before.right - left);
    let short = width < page_width / 2.0 || margin - before.right > line.size * 6.0;
    let indented = matches!((placement.left, before.left), (Some(l), Some(b)) if l > b + line.size);
    let spread = placement.spread || before.spread;
    let sentence_ends = line_before.text.trim_end().ends_with(['.', '!', '?', ':']);
    other_spacing || other_size || short || indented || spread || sentence_ends
}

impl pdf_extract::OutputDev for PageLayout {
    fn begin_page(
        &mut self,
        _page_num: u32,
        media_box: &pdf_extract::MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), pdf_extract::OutputError> {
        self.page_width = (media_box.urx - media_box.llx).abs();
        Ok(())
    }
    fn end_page(&mut self) -> Result<(), pdf_extract::OutputError> {
        Ok(())
    }
    fn output_character(
        &mut self,
        trm: &pdf_extract::Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), pdf_extract::OutputError> {
        self.glyphs += 1;
        // Page space with y downwards, as the text is read.
        let origin = (trm.m31, -trm.m32);
        let baseline = (trm.m11, -trm.m12);
        let length = baseline.0.hypot(baseline.1);
        let direction = if length > 0.0 {
            (baseline.0 / length, baseline.1 / length)
        } else {
            (1.0, 0.0)
        };
        let scale = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt();
        let size = Some(font_size * scale)
            .filter(|s| s.is_finite())
            .unwrap_or(0.0);
        if let Some(pen) = self.pen.filter(|_| self.word_start) {
            self.separate(pen, origin, size, direction);
        }
        self.placement
            .left
            .get_or_insert(project(origin, direction).0);
        push_glyph_text(&mut self.text, char);
        self.count_size(size, char);
        self.word_start = false;
        let advance = width * size;
        self.pen = Some(Pen {
            direction,
            origin,
            end: (
                origin.0 + direction.0 * advance,
                origin.1 + direction.1 * advance,
            ),
        });
        Ok(())
    }
    fn begin_word(&mut self) -> Result<(), pdf_extract::OutputError> {
        self.word_start = true;
        Ok(())
    }
    fn end_word(&mut self) -> Result<(), pdf_extract::OutputError> {
        Ok(())
    }
    fn end_line(&mut self) -> Result<(), pdf_extract::OutputError> {
        Ok(())
    }
}
