use serde::{Deserialize, Serialize};

/// Stable error codes, used in messages, `kts.error/1` records and man pages.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    BadJson,
    BadRecord,
    Io,
    Unsupported,
    Encrypted,
    Corrupt,
    Empty,
    TooLarge,
    ExternalReference,
    Timeout,
    UnsafePath,
    OcrUnavailable,
    Incomplete,
    Internal,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 14] = [
        Self::BadJson,
        Self::BadRecord,
        Self::Io,
        Self::Unsupported,
        Self::Encrypted,
        Self::Corrupt,
        Self::Empty,
        Self::TooLarge,
        Self::ExternalReference,
        Self::Timeout,
        Self::UnsafePath,
        Self::OcrUnavailable,
        Self::Incomplete,
        Self::Internal,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadJson => "bad-json",
            Self::BadRecord => "bad-record",
            Self::Io => "io",
            Self::Unsupported => "unsupported",
            Self::Encrypted => "encrypted",
            Self::Corrupt => "corrupt",
            Self::Empty => "empty",
            Self::TooLarge => "too-large",
            Self::ExternalReference => "external-reference",
            Self::Timeout => "timeout",
            Self::UnsafePath => "unsafe-path",
            Self::OcrUnavailable => "ocr-unavailable",
            Self::Incomplete => "incomplete",
            Self::Internal => "internal",
        }
    }

    pub fn description(self) -> &'static str {
        match self {
            Self::BadJson => "an input line is not valid JSON",
            Self::BadRecord => "an input line is JSON but not a valid record of its schema",
            Self::Io => "a file could not be read or written",
            Self::Unsupported => "the file's format is not one kts converts",
            Self::Encrypted => "the document is password-protected",
            Self::Corrupt => "the document is damaged or truncated and cannot be parsed",
            Self::Empty => "the file is empty",
            Self::TooLarge => "the document exceeds a size, page or decompression limit",
            Self::ExternalReference => {
                "the document pulls in a local file by reference; it is never read"
            }
            Self::Timeout => "conversion took longer than the time limit",
            Self::UnsafePath => {
                "a record's path is absolute or leaves its scope (through '..' or a symbolic \
                 link), its doc_id is not the one kts gives its path, or its root is another \
                 scope's; nothing is read or written there"
            }
            Self::OcrUnavailable => {
                "the document needs OCR (an image, or a PDF page without a text layer) and the \
                 OCR programs (tesseract, pdftoppm) cannot be run"
            }
            Self::Incomplete => {
                "fewer of a document's chunks arrived than kts-chunk wrote (the stream was cut \
                 short or filtered upstream); the document is left as it was"
            }
            Self::Internal => "a converter failed unexpectedly (a bug: please report it)",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
