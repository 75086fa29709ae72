//! kts-quality: scores a converter against the ground truth in the shared fixtures.
//!
//!     kts-quality                      # run kts-convert on every fixture with ground truth
//!     kts-quality --markdown-dir DIR   # score another converter's output: DIR/<fixture>.md
//!                                      # (or DIR/<fixture>.err when it failed)
//!     kts-quality --list               # the fixtures to convert, one per line
//!
//! Options: --label NAME (the report's title), --json PATH (per-file scores).
//! It prints the report and exits 0: the thresholds live in tests/quality.rs.

use std::path::PathBuf;

use kts_tests::quality;

fn usage() -> ! {
    eprintln!(
        "usage: kts-quality [--markdown-dir DIR] [--label NAME] [--json PATH] | kts-quality --list"
    );
    std::process::exit(2)
}

fn main() {
    let mut dir: Option<PathBuf> = None;
    let mut label: Option<String> = None;
    let mut json: Option<PathBuf> = None;
    let mut list = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--markdown-dir" => dir = Some(args.next().unwrap_or_else(|| usage()).into()),
            "--label" => label = Some(args.next().unwrap_or_else(|| usage())),
            "--json" => json = Some(args.next().unwrap_or_else(|| usage()).into()),
            "--list" => list = true,
            _ => usage(),
        }
    }
    if list {
        let fixtures = kts_tests::fixtures_dir();
        let (cases, _) = quality::cases(&fixtures, &kts_tests::manifest());
        let files: std::collections::BTreeSet<String> = cases.into_iter().map(|c| c.file).collect();
        for file in files {
            println!("{file}");
        }
        return;
    }
    let report = match &dir {
        Some(dir) => {
            let dir = dir
                .canonicalize()
                .unwrap_or_else(|e| panic!("--markdown-dir {}: {e}", dir.display()));
            quality::evaluate(label.as_deref().unwrap_or("markdown folder"), |entry| {
                quality::folder_conversion(&dir, entry)
            })
        }
        None => {
            let fixtures = kts_tests::fixtures_dir();
            quality::evaluate(label.as_deref().unwrap_or("kts-convert"), |entry| {
                quality::kts_conversion(&fixtures, entry)
            })
        }
    };
    print!("{}", report.table());
    if let Some(path) = json {
        report.write_json(&path);
        eprintln!("per-file scores written to {}", path.display());
    }
}
