//! A page's glyphs laid out as lines of text, each with the font size most
//! of its glyphs are drawn at.
//!
//! The rules are pdf-extract's plain-text ones (a move down starts a line, a
//! large one leaves a blank line, a gap along the line is a space), applied
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

/// The lines of a page, built as pdf-extract hands over the glyphs.
#[derive(Default)]
pub struct PageLayout {
    lines: Vec<Line>,
    text: String,
    /// Glyph counts per font size on the current line.
    sizes: Vec<(f64, usize)>,
    pen: Option<Pen>,
    word_start: bool,
    pub glyphs: usize,
}

impl PageLayout {
    pub fn into_lines(mut self) -> Vec<Line> {
        self.end_line();
        self.lines
    }

    fn end_line(&mut self) {
        let size = self
            .sizes
            .iter()
            .max_by_key(|(_, count)| *count)
            .map_or(0.0, |(size, _)| *size);
        self.lines.push(Line {
            text: std::mem::take(&mut self.text),
            size,
            heading: None,
        });
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
        if drop > size * 1.5 {
            self.end_line();
        }
        if x < last_end && drop > size * 0.5 {
            self.end_line();
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

impl pdf_extract::OutputDev for PageLayout {
    fn begin_page(
        &mut self,
        _page_num: u32,
        _media_box: &pdf_extract::MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), pdf_extract::OutputError> {
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
        self.text.push_str(char);
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
