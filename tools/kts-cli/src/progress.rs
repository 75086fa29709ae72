use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress counter on stderr when a human is watching it and this tool
/// ends the pipeline, else a hidden one. `total` is the number of items when
/// known; `unit` names them ("documents").
pub fn progress_bar(tool: &str, total: Option<u64>, unit: &str) -> ProgressBar {
    let stdout_is_pipe = std::fs::metadata("/dev/stdout").is_ok_and(|m| is_fifo(&m));
    if !draws_progress(std::io::stderr().is_terminal(), stdout_is_pipe) {
        return ProgressBar::hidden();
    }
    let template = match total {
        Some(_) => format!("{tool}: {{bar:30}} {{human_pos}}/{{human_len}} {unit}, {{elapsed}}"),
        None => format!("{tool}: {{spinner}} {{human_pos}} {unit}, {{elapsed}}"),
    };
    ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr())
        .with_style(ProgressStyle::with_template(&template).expect("valid template"))
}

/// Whether a tool draws progress: only when stderr is a terminal, and only
/// the stage whose output goes to no further stage (a file, a terminal), so
/// that one line shows for a whole pipeline, not one per stage fighting over
/// it. The stream flows at the pace of its slowest stage, which the last
/// one's count shows.
fn draws_progress(stderr_is_terminal: bool, stdout_is_pipe: bool) -> bool {
    stderr_is_terminal && !stdout_is_pipe
}

#[cfg(unix)]
fn is_fifo(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    metadata.file_type().is_fifo()
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_stage_watched_by_a_human_draws_progress() {
        assert!(draws_progress(true, false));
        assert!(!draws_progress(true, true), "a stage piping into another");
        assert!(!draws_progress(false, false), "stderr to a log file");
    }

    #[test]
    fn a_pipe_is_told_from_a_file() {
        let (reader, _writer) = std::io::pipe().unwrap();
        let pipe = std::fs::metadata(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&reader)
        ))
        .unwrap();
        assert!(is_fifo(&pipe));
        let file = std::fs::metadata(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
        assert!(!is_fifo(&file));
    }
}
