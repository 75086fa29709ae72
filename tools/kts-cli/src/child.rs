//! Running an outside program (tesseract, pdftoppm, an image describer, a
//! reranker) with a time limit.
//!
//! The program runs in its own process group, so that on timeout everything it
//! started is killed with it (a shell script's `sleep` would otherwise keep the
//! output pipe open).

use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Why a program gave no output.
#[derive(Debug)]
pub enum ChildError {
    /// The program does not exist or cannot be executed.
    NotFound(io::Error),
    TimedOut,
    /// It ran and failed: its exit status and the end of what it printed on stderr.
    Failed(String),
}

/// Runs `command` and returns its standard output (at most `max_output`
/// bytes; the rest is read and dropped). Stdin is closed.
pub fn output(
    command: &mut Command,
    limit: Duration,
    max_output: usize,
) -> Result<Vec<u8>, ChildError> {
    output_fed(command, None, limit, max_output)
}

/// [`output`] of a program reading `input` on its stdin (written as it
/// reads; a program that stops reading early is not an error of ours).
pub fn output_fed(
    command: &mut Command,
    input: Option<Vec<u8>>,
    limit: Duration,
    max_output: usize,
) -> Result<Vec<u8>, ChildError> {
    let stdin = if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    let mut child = command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(ChildError::NotFound)?;
    if let (Some(mut pipe), Some(input)) = (child.stdin.take(), input) {
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    let stdout = read_on_thread(child.stdout.take(), max_output);
    let stderr = read_on_thread(child.stderr.take(), 4096);
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(ChildError::TimedOut);
            }
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            Err(e) => {
                kill_group(child.id());
                let _ = child.wait();
                return Err(ChildError::Failed(format!("cannot wait for it: {e}")));
            }
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    if status.success() {
        Ok(stdout)
    } else {
        let said = String::from_utf8_lossy(&stderr);
        let said = said.trim();
        Err(ChildError::Failed(if said.is_empty() {
            status.to_string()
        } else {
            format!("{status}: {said}")
        }))
    }
}

fn read_on_thread(pipe: Option<impl Read + Send + 'static>, max: usize) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = (&mut pipe).take(max as u64).read_to_end(&mut kept);
            let _ = io::copy(&mut pipe, &mut io::sink());
        }
        kept
    })
}

#[allow(unsafe_code)]
fn kill_group(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; the
    // group is the child's own (process_group(0)) and the child is not yet
    // reaped, so its id cannot have been reused.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    }

    #[test]
    fn output_is_returned_and_bounded() {
        let out = output(&mut sh("echo hello; echo more"), Duration::from_secs(10), 5).unwrap();
        assert_eq!(out, b"hello");
    }

    #[test]
    fn a_failing_program_says_why() {
        let error = output(
            &mut sh("echo broken >&2; exit 3"),
            Duration::from_secs(10),
            100,
        )
        .unwrap_err();
        match error {
            ChildError::Failed(why) => assert!(why.contains("broken"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn input_reaches_the_program() {
        let out = output_fed(
            &mut sh("tr a-z A-Z"),
            Some(b"question\n".to_vec()),
            Duration::from_secs(10),
            100,
        )
        .unwrap();
        assert_eq!(out, b"QUESTION\n");
        // A program that reads nothing still gives its output.
        let big = vec![b'x'; 1 << 20];
        let out = output_fed(
            &mut sh("echo done"),
            Some(big),
            Duration::from_secs(10),
            100,
        );
        assert_eq!(out.unwrap(), b"done\n");
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let error = output(
            &mut Command::new("/nonexistent/kts-no-such-program"),
            Duration::from_secs(10),
            100,
        )
        .unwrap_err();
        assert!(matches!(error, ChildError::NotFound(_)), "{error:?}");
    }

    #[test]
    fn a_slow_program_and_its_children_are_killed() {
        let started = Instant::now();
        // The shell's child `sleep` holds stdout open: it must die too.
        let error = output(
            &mut sh("sleep 30; echo late"),
            Duration::from_millis(300),
            100,
        )
        .unwrap_err();
        assert!(matches!(error, ChildError::TimedOut), "{error:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
