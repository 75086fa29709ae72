use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar on stderr when a human is watching it, else a hidden one.
/// `total` is the number of items when known.
pub fn progress_bar(tool: &str, total: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    match total {
        Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template(&format!(
                "{tool}: {{bar:30}} {{pos}}/{{len}} {{per_sec}} {{msg}}"
            ))
            .expect("valid template"),
        ),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()).with_style(
            ProgressStyle::with_template(&format!(
                "{tool}: {{spinner}} {{pos}} {{per_sec}} {{msg}}"
            ))
            .expect("valid template"),
        ),
    }
}
