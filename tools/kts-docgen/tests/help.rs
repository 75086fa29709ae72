//! Each tool's `--help` shows a pipeline example, touches no files, and its
//! examples run. The tools' binaries belong to other packages, so they are
//! found next to this test's own binary in `target/<profile>/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kts_docgen::{Rejects, TOOLS};

#[test]
fn help_shows_a_pipeline_example_and_touches_no_files() {
    for tool in &TOOLS {
        let empty = tempfile::tempdir().unwrap();
        let output = run(Command::new(binary(tool.name)).arg("--help"), empty.path());
        assert!(
            output.status.success(),
            "{} --help failed: {output:?}",
            tool.name
        );
        let help = String::from_utf8(output.stdout).unwrap();
        for line in examples(&help) {
            assert!(
                quotes_balanced(&line),
                "{} --help wraps an example (clap wraps help text at 100 columns \
                 when stdout is not a terminal); keep example lines shorter:\n{line}",
                tool.name
            );
        }
        // The pipeline's stages show the pipeline; tools beside it (kts-eval)
        // show how they are run.
        let shown = if tool.rejects == Rejects::Nothing {
            tool.name
        } else {
            "kts-crawl "
        };
        assert!(
            examples(&help).iter().any(|line| line.contains(shown)),
            "{} --help shows no example running {shown}:\n{help}",
            tool.name
        );
        let left: Vec<_> = std::fs::read_dir(empty.path()).unwrap().collect();
        assert!(left.is_empty(), "{} --help wrote {left:?}", tool.name);
    }
}

/// Runs the examples of every tool's `--help` as one script (later lines may
/// use what earlier ones built, such as an index) with bash's errexit and
/// pipefail, in a fresh folder holding the demo scope as `docs/`.
#[test]
fn help_examples_run() {
    let mut ran = 0;
    for tool in &TOOLS {
        let help = run(
            Command::new(binary(tool.name)).arg("--help"),
            Path::new("."),
        );
        let mut script = vec!["set -e -o pipefail".to_string()];
        for example in examples(&String::from_utf8(help.stdout).unwrap()) {
            match missing_command(&example) {
                Some(missing) => eprintln!("skipped (no {missing} on PATH): {example}"),
                None => script.push(example),
            }
        }
        if script.len() == 1 {
            continue;
        }
        let output = run_in_demo_scope(&script.join("\n"));
        assert!(
            output.status.success(),
            "the examples of {} failed:\n{}\n{}",
            tool.name,
            script.join("\n"),
            String::from_utf8_lossy(&output.stderr)
        );
        ran += 1;
    }
    assert!(
        ran >= TOOLS.len() - 1,
        "only the examples of {ran} tools ran"
    );
}

/// Runs a script in a fresh folder holding what the examples name: the demo
/// scope as `docs/` and tiny BEIR data sets as `beir/scifact/` and
/// `beir/devset/` (judged as `test` and as `dev`).
fn run_in_demo_scope(example: &str) -> Output {
    let work = tempfile::tempdir().unwrap();
    let made = run(Command::new(binary("kts-sample")).arg("docs"), work.path());
    assert!(made.status.success(), "kts-sample docs failed: {made:?}");
    write_tiny_beir(&work.path().join("beir/scifact"));
    write_tiny_beir(&work.path().join("beir/devset"));
    run(
        Command::new("bash").args(["-o", "pipefail", "-c", example]),
        work.path(),
    )
}

fn write_tiny_beir(dir: &Path) {
    std::fs::create_dir_all(dir.join("qrels")).unwrap();
    let corpus = [
        (
            "d1",
            "Vitamin D",
            "Vitamin D deficiency is common in winter.",
        ),
        ("d2", "Sleep", "Short sleep raises the risk of obesity."),
        ("d3", "Exercise", "Regular exercise lowers blood pressure."),
    ];
    let lines: Vec<String> = corpus
        .iter()
        .map(|(id, title, text)| {
            format!(r#"{{"_id": "{id}", "title": "{title}", "text": "{text}"}}"#)
        })
        .collect();
    std::fs::write(dir.join("corpus.jsonl"), lines.join("\n")).unwrap();
    let queries = r#"{"_id": "q1", "text": "vitamin D in winter"}
{"_id": "q2", "text": "exercise and blood pressure"}"#;
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
    for split in ["test", "dev"] {
        std::fs::write(
            dir.join(format!("qrels/{split}.tsv")),
            "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n",
        )
        .unwrap();
    }
}

/// The lines of the `Example:` paragraph of a help text.
fn examples(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| !matches!(line.trim(), "Example:" | "Examples:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .map(|line| line.trim().to_string())
        .collect()
}

/// A program an example calls that is neither a kts tool nor installed.
fn missing_command(example: &str) -> Option<String> {
    without_quoted(example)
        .split(['|', '&'])
        .filter_map(|command| command.split_whitespace().next())
        .filter(|program| !program.starts_with("kts-"))
        .find(|program| !system_path().iter().any(|dir| dir.join(program).is_file()))
        .map(String::from)
}

/// The example with its quoted arguments (jq programs, say) left out, so
/// that a `|` inside them is not taken for a pipe.
fn without_quoted(example: &str) -> String {
    let mut quote = None;
    let mut kept = String::new();
    for c in example.chars() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(open), _) if c == open => quote = None,
            (None, _) => kept.push(c),
            (Some(_), _) => {}
        }
    }
    kept
}

/// Whether every quote the line opens is closed: a wrapped example is not.
fn quotes_balanced(line: &str) -> bool {
    line.matches('\'').count().is_multiple_of(2) && line.matches('"').count().is_multiple_of(2)
}

fn run(command: &mut Command, dir: &Path) -> Output {
    let path = std::env::join_paths(std::iter::once(target_dir()).chain(system_path())).unwrap();
    command
        .current_dir(dir)
        .env_clear()
        .env("PATH", path)
        .output()
        .expect("the command starts")
}

fn system_path() -> Vec<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()).collect()
}

/// `target/<profile>/`: the parent of the `deps/` folder this test runs from.
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test knows its path");
    let deps = exe.parent().expect("the test binary is in deps/");
    deps.parent()
        .expect("deps/ is in the target folder")
        .to_path_buf()
}

fn binary(tool: &str) -> PathBuf {
    let path = target_dir().join(format!("{tool}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is not built; run `cargo build --workspace` first",
        path.display()
    );
    path
}
