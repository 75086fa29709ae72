//! Optical character recognition: Tesseract reads images, poppler's pdftoppm
//! renders PDF pages for it. Both run as child processes with a time limit
//! per page; a missing program makes the file `ocr-unavailable`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use kts_record::ErrorCode;

use crate::formats::ConvertError;
use kts_cli::child::{self, ChildError};

/// Longest side, in pixels, a PDF page is rendered at for OCR: about 250 dpi
/// on A4 and Letter pages, and a bound on the memory any page may take.
const PAGE_PIXELS: u32 = 3000;
/// More text than any page holds; the rest of a runaway output is dropped.
const MAX_TEXT_BYTES: usize = 16 << 20;
/// A reading whose words tesseract is on average less sure of than this
/// (0–100) may be of a page it left upside down or sideways.
const DOUBTFUL_CONFIDENCE: f64 = 60.0;
/// Fewer words than this say too little to read a page again for.
const MIN_WORDS_TO_DOUBT: usize = 3;
/// What to tell someone whose machine lacks the OCR programs.
pub const INSTALL_HINT: &str =
    "install them with: apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils";

/// Which pages are read with OCR.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OcrMode {
    /// Images, PDF pages without a text layer, and scanned pages with a few
    /// words of text on them.
    #[default]
    Auto,
    /// Images, and every PDF page (its text layer is replaced).
    Always,
    /// Nothing: images and pages without a text layer stay empty.
    Never,
}

/// How to run OCR.
#[derive(Clone, Debug)]
pub struct Ocr {
    pub mode: OcrMode,
    /// The tesseract command.
    pub tesseract: String,
    /// The pdftoppm command.
    pub pdftoppm: String,
    /// Tesseract's `-l` argument: language packs joined by `+`.
    pub languages: String,
    /// Time limit for rendering or reading one page.
    pub page_timeout: Duration,
    /// Largest image, in pixels, that is read.
    pub max_pixels: u64,
    /// When the document's own time limit (--timeout) runs out. A conversion
    /// past it is abandoned, so no page is started after it.
    pub deadline: Option<Instant>,
}

impl Default for Ocr {
    fn default() -> Self {
        Self {
            mode: OcrMode::Auto,
            tesseract: "tesseract".into(),
            pdftoppm: "pdftoppm".into(),
            languages: "eng".into(),
            page_timeout: Duration::from_secs(60),
            max_pixels: 50_000_000,
            deadline: None,
        }
    }
}

impl Ocr {
    /// The text Tesseract reads in an image file.
    ///
    /// Tesseract turns a page only when its orientation data is sure of it,
    /// and a page of a few lines seldom gives it enough text to be: such a
    /// page upside down is read as it lies, into words it is unsure of. A
    /// reading that doubtful is read again, turned the way the orientation
    /// data says however unsure, and the reading with the surer words kept.
    pub fn image_text(&self, image: &Path) -> Result<String, ConvertError> {
        let reading = self.read(image, false)?;
        if !reading.is_doubtful() {
            return Ok(reading.text);
        }
        match self.read(image, true) {
            Ok(turned) if turned.confidence > reading.confidence => Ok(turned.text),
            _ => Ok(reading.text),
        }
    }

    /// Runs tesseract on an image, turning it as its orientation data says
    /// when that data is sure of it, or whenever `trust_orientation`.
    fn read(&self, image: &Path, trust_orientation: bool) -> Result<Reading, ConvertError> {
        let mut command = Command::new(&self.tesseract);
        command
            .arg(image)
            .arg("stdout")
            .arg("-l")
            .arg(&self.languages)
            // Page layout as tesseract's default, after it detects the
            // page's orientation and turns a sideways or upside-down page
            // upright (about a fifth more time on a page of text). Without
            // its osd.traineddata it reads the page as it is.
            .args(["--psm", "1"])
            // Documents are converted in parallel already: one thread each.
            .env("OMP_THREAD_LIMIT", "1");
        if trust_orientation {
            command.args(["-c", "min_orientation_margin=0"]);
        }
        // Each word with its confidence, then the text.
        command.args(["tsv", "txt"]);
        let output = child::output(&mut command, self.time_left()?, MAX_TEXT_BYTES)
            .map_err(|e| self.failure("tesseract", &self.tesseract, e))?;
        Ok(Reading::of(&String::from_utf8_lossy(&output)))
    }

    /// Renders page `number` of the PDF at `pdf` into `dir` and reads it.
    pub fn pdf_page_text(
        &self,
        pdf: &Path,
        number: u32,
        dir: &Path,
    ) -> Result<String, ConvertError> {
        let page = number.to_string();
        let stem = dir.join(format!("page-{number}"));
        let mut command = Command::new(&self.pdftoppm);
        command
            .args(["-f", &page, "-l", &page, "-singlefile", "-gray", "-png"])
            .args(["-scale-to", &PAGE_PIXELS.to_string()])
            .arg(pdf)
            .arg(&stem);
        child::output(&mut command, self.time_left()?, MAX_TEXT_BYTES)
            .map_err(|e| self.failure("pdftoppm", &self.pdftoppm, e))?;
        let image = stem.with_extension("png");
        let text = self.image_text(&image);
        let _ = std::fs::remove_file(&image);
        text
    }

    /// The time a program may take on this page.
    fn time_left(&self) -> Result<Duration, ConvertError> {
        let Some(deadline) = self.deadline else {
            return Ok(self.page_timeout);
        };
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ConvertError::new(
                ErrorCode::Timeout,
                "the document's time limit (--timeout) ran out during OCR",
            ));
        }
        Ok(left.min(self.page_timeout))
    }

    fn failure(&self, program: &str, command: &str, error: ChildError) -> ConvertError {
        match error {
            ChildError::NotFound(e) => ConvertError::new(
                ErrorCode::OcrUnavailable,
                format!("cannot run {program} ({command}: {e}); {INSTALL_HINT}"),
            ),
            ChildError::TimedOut => ConvertError::new(
                ErrorCode::Timeout,
                format!(
                    "{program} took longer than {} s on one page (--ocr-timeout)",
                    self.page_timeout.as_secs()
                ),
            ),
            ChildError::Failed(why) if why.contains("Failed loading language") => {
                ConvertError::new(
                    ErrorCode::OcrUnavailable,
                    format!(
                        "tesseract has no data for the language(s) {} (--ocr-languages): {}",
                        self.languages,
                        reason(&why)
                    ),
                )
            }
            ChildError::Failed(why) => {
                ConvertError::corrupt(format!("{program} cannot read it: {}", reason(&why)))
            }
        }
    }
}

/// What tesseract read in an image.
struct Reading {
    text: String,
    words: usize,
    /// The mean of the words' confidences (0–100), 0 without words.
    confidence: f64,
}

impl Reading {
    /// Tesseract's output with its `tsv` and `txt` renderers: for each page,
    /// a row per word box (with the word's confidence), then the page's text.
    fn of(output: &str) -> Self {
        let mut text = String::new();
        let mut confidences = Vec::new();
        for line in output.split_inclusive('\n') {
            let fields: Vec<&str> = line.trim_end_matches(['\r', '\n']).split('\t').collect();
            let [level, .., confidence, word] = fields[..] else {
                text.push_str(line);
                continue;
            };
            if fields.len() != TSV_FIELDS || !is_tsv_level(level) {
                text.push_str(line);
            } else if level == "5" && !word.trim().is_empty() {
                confidences.extend(confidence.parse::<f64>().ok().filter(|c| *c >= 0.0));
            }
        }
        let words = confidences.len();
        let confidence = if words == 0 {
            0.0
        } else {
            confidences.iter().sum::<f64>() / words as f64
        };
        Self {
            text,
            words,
            confidence,
        }
    }

    fn is_doubtful(&self) -> bool {
        self.words >= MIN_WORDS_TO_DOUBT && self.confidence < DOUBTFUL_CONFIDENCE
    }
}

/// The columns of tesseract's TSV: level, page, block, paragraph, line and
/// word numbers, the box (4), the confidence and the text.
const TSV_FIELDS: usize = 12;

/// A TSV row's level (1 page, 2 block, 3 paragraph, 4 line, 5 word), or
/// the header row's name for it.
fn is_tsv_level(level: &str) -> bool {
    matches!(level, "level" | "1" | "2" | "3" | "4" | "5")
}

/// Lines tesseract prints that say nothing about a failure.
const CHATTER: [&str; 4] = [
    "Estimating resolution",
    "Warning. Invalid resolution",
    "Tesseract Open Source",
    "Page ",
];

/// One line of why a program failed (`why`: its exit status, then what it
/// printed): the first line it printed that is not chatter, without
/// leptonica's "Error in <function>:" prefix. The lines after it are the
/// same failure traced back through the library's calls.
fn reason(why: &str) -> &str {
    let printed = why
        .strip_prefix("exit status: ")
        .and_then(|rest| rest.split_once(": "))
        .map_or(why, |(_, printed)| printed);
    printed
        .lines()
        .map(|line| {
            let line = line.trim();
            line.strip_prefix("Error in ")
                .and_then(|traced| traced.split_once(": "))
                .map_or(line, |(_, message)| message)
        })
        .find(|line| !line.is_empty() && !CHATTER.iter().any(|c| line.starts_with(c)))
        .unwrap_or(why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_is_the_text_and_the_mean_confidence_of_its_words() {
        let output = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\t\
            left\ttop\twidth\theight\tconf\ttext\n\
            1\t1\t0\t0\t0\t0\t0\t0\t90\t20\t-1\t\n\
            5\t1\t1\t1\t1\t1\t0\t0\t40\t20\t90.5\tFire\n\
            5\t1\t1\t1\t1\t2\t50\t0\t40\t20\t29.5\tdrill\n\
            5\t1\t1\t1\t1\t3\t95\t0\t5\t20\t95\t \n\
            Fire drill\n\n\x0cNext page\n";
        let reading = Reading::of(output);
        assert_eq!(reading.text, "Fire drill\n\n\x0cNext page\n");
        assert_eq!((reading.words, reading.confidence), (2, 60.0));
        let plain = Reading::of("what another program printed\n");
        assert_eq!(plain.text, "what another program printed\n");
        assert!(!plain.is_doubtful());
    }
}
