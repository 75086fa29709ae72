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

pub(crate) fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .filter_map(|cause| cause.downcast_ref::<io::Error>())
        .any(|e| e.kind() == io::ErrorKind::BrokenPipe)
}
