use std::io::{self, BufWriter, Stdout, Write};

use serde::Serialize;

/// Writes one JSON record per line to stdout.
///
/// A closed stdout (the reader is done, as with `| head -1`) ends the process
/// at once with status 0 and no message: that is the Unix convention.
pub struct JsonlWriter {
    out: BufWriter<Stdout>,
    line: Vec<u8>,
}

impl Default for JsonlWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonlWriter {
    pub fn new() -> Self {
        Self {
            out: BufWriter::with_capacity(1 << 16, io::stdout()),
            line: Vec::with_capacity(4096),
        }
    }

    pub fn write<T: Serialize + ?Sized>(&mut self, record: &T) -> anyhow::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, record)?;
        self.line.push(b'\n');
        exit_quietly_on_broken_pipe(self.out.write_all(&self.line))?;
        Ok(())
    }

    /// Pushes buffered records downstream, so that the next stage can start on them.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        exit_quietly_on_broken_pipe(self.out.flush())?;
        Ok(())
    }
}

impl Drop for JsonlWriter {
    fn drop(&mut self) {
        let _ = exit_quietly_on_broken_pipe(self.out.flush());
    }
}

fn exit_quietly_on_broken_pipe(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => other,
    }
}

/// Whether a write failed because the reader went away, also when serde_json
/// wrote (its error does not list the `io::Error` among its causes).
pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        let kind = match cause.downcast_ref::<serde_json::Error>() {
            Some(e) => e.io_error_kind(),
            None => cause.downcast_ref::<io::Error>().map(io::Error::kind),
        };
        kind == Some(io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that has gone away.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_broken_pipe_is_recognised_whoever_wrote() {
        let by_serde_json = serde_json::to_writer_pretty(ClosedPipe, &[1, 2]).unwrap_err();
        assert!(is_broken_pipe(&anyhow::Error::new(by_serde_json)));
        let by_hand = ClosedPipe.write_all(b"x").unwrap_err();
        assert!(is_broken_pipe(
            &anyhow::Error::new(by_hand).context("writing")
        ));
        let other = serde_json::from_str::<u8>("x").unwrap_err();
        assert!(!is_broken_pipe(&anyhow::Error::new(other)));
    }
}
