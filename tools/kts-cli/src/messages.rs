use std::cell::Cell;
use std::io::Write;

use kts_record::{ErrorCode, ErrorRecord};

/// Messages for humans, on stderr, prefixed with the tool's name; counts the
/// rejected records so the tool can set its exit status at the end.
pub struct Messages {
    tool: &'static str,
    failures: Cell<usize>,
    quiet: bool,
}

impl Messages {
    pub fn new(tool: &'static str) -> Self {
        Self {
            tool,
            failures: Cell::new(0),
            quiet: false,
        }
    }

    /// Silences warnings and per-record errors (the exit status still tells).
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    pub fn tool(&self) -> &'static str {
        self.tool
    }

    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// Reports a rejected input: `kts-x: error (at WHERE): CODE: MESSAGE`.
    pub fn reject(&self, at: &str, code: ErrorCode, message: &str) {
        self.failures.set(self.failures.get() + 1);
        if !self.quiet {
            say(format_args!(
                "{}: error (at {at}): {code}: {message}",
                self.tool
            ));
        }
    }

    /// Reports a rejected input and returns the error record to send downstream.
    pub fn reject_record(&self, path: &str, code: ErrorCode, message: &str) -> ErrorRecord {
        self.reject(path, code, message);
        ErrorRecord::new(self.tool, path, code, message)
    }

    pub fn warn(&self, message: &str) {
        if !self.quiet {
            say(format_args!("{}: warning: {message}", self.tool));
        }
    }

    /// A one-line summary for batch logs.
    pub fn info(&self, message: &str) {
        say(format_args!("{}: {message}", self.tool));
    }

    pub fn failures(&self) -> usize {
        self.failures.get()
    }

    /// The exit status the failures so far call for.
    pub fn exit(&self) -> crate::Exit {
        if self.failures.get() == 0 {
            crate::Exit::Ok
        } else {
            crate::Exit::SomeFailed
        }
    }
}

/// Writes a line on stderr. One that cannot be written (stderr redirected to
/// a full disk) is lost: a diagnostic must not end the process.
pub fn say(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{line}");
}
