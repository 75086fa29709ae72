"""Writes the seed corpus of every fuzz target into fuzz/corpus/TARGET/.

    python3 fuzz/seed.py --fixtures SHARED/fixtures --eval SHARED/eval --bin target/release

Seeds: the shared fixtures and the bundled sample (kts-sample) by extension,
with damaged copies of the sample (truncated, bytes flipped); the sample's
records and Markdown for the stream targets; the evaluation sets' questions
for the question and catalog targets; fuzz/seeds/config/ for config.
Each file is at most 256 KiB (libFuzzer works best with small inputs).
"""

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MAX_BYTES = 256 << 10
PER_TARGET = 60
EXTENSIONS = {
    "md": "md", "markdown": "md", "txt": "txt", "html": "html", "htm": "html",
    "json": "json", "docx": "docx", "doc": "doc", "pptx": "pptx", "ppt": "ppt",
    "pps": "ppt", "pdf": "pdf", "csv": "csv",
    "tsv": "csv", "xlsx": "xlsx", "xlsm": "xlsx", "xls": "xls", "ods": "ods",
    "eml": "eml", "mbox": "mbox", "msg": "msg", "odt": "odt", "odp": "odp",
    "epub": "epub", "rtf": "rtf", "vtt": "vtt", "adoc": "adoc", "asciidoc": "adoc",
    "png": "png",
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixtures", type=Path, required=True)
    parser.add_argument("--eval", type=Path, required=True)
    parser.add_argument("--bin", type=Path, required=True)
    args = parser.parse_args()
    for folder in (args.fixtures, args.eval):
        if not folder.is_dir():
            sys.exit(f"fuzz seed: {folder} is missing (set KTS_SHARED_DIR)")
    here = Path(__file__).resolve().parent
    corpus = here / "corpus"
    shutil.rmtree(corpus, ignore_errors=True)
    counts = {}

    def add(target, name, data):
        if not data or len(data) > MAX_BYTES or counts.get(target, 0) >= PER_TARGET:
            return
        folder = corpus / target
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        counts[target] = counts.get(target, 0) + 1

    with tempfile.TemporaryDirectory() as work:
        sample = Path(work) / "sample"
        subprocess.run([args.bin / "kts-sample", sample], check=True, stderr=subprocess.DEVNULL)
        rng = random.Random(7)
        for path in sorted(p for p in sample.rglob("*") if p.is_file()):
            fmt = EXTENSIONS.get(path.suffix.lower().lstrip("."))
            if not fmt:
                continue
            data = path.read_bytes()
            add(f"convert_{fmt}", path.name, data)
            add(f"convert_{fmt}", f"truncated-{path.name}", data[: len(data) // 2])
            flipped = bytearray(data)
            for _ in range(16):
                flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            add(f"convert_{fmt}", f"flipped-{path.name}", bytes(flipped))
            add("detect", path.name, bytes([0]) + data[:8192])
        stream = subprocess.run(
            f'"{args.bin}/kts-crawl" "{sample}" | "{args.bin}/kts-convert" --ocr never',
            shell=True, check=True, capture_output=True).stdout
        chunks = subprocess.run([args.bin / "kts-chunk"], input=stream, check=True,
                                capture_output=True).stdout
        for n, line in enumerate(stream.splitlines()):
            add("records", f"document-{n}.jsonl", line + b"\n")
            markdown = json.loads(line).get("markdown", "").encode()
            add("chunk", f"document-{n}.md", bytes([100, 200, 100]) + markdown)
        add("records", "chunks.jsonl", chunks[:MAX_BYTES])

    for path in sorted(p for p in args.fixtures.rglob("*") if p.is_file()):
        fmt = EXTENSIONS.get(path.suffix.lower().lstrip("."))
        if fmt:
            target = f"convert_{fmt}"
            add(target, f"fixture-{counts.get(target, 0)}{path.suffix}", path.read_bytes())

    questions = []
    for path in sorted(args.eval.rglob("queries*.jsonl")):
        for line in path.read_text().splitlines()[:40]:
            text = json.loads(line).get("text")
            if text:
                questions.append(text)
    questions += ["how do I fix AUTH401?", "what does E-5 mean", 'NEAR("token" cache) OR *',
                  "retention policy 2023 and the DPO; then restart the Gateway", "/hr leave"]
    for n, question in enumerate(questions):
        add("question", f"question-{n}", question.encode())
        add("catalog", f"question-{n}", question.encode())

    paths = ["a.md", "sub/b.md", "sub/../a.md", "./sub//b.md", "../outside/secret.md",
             "/etc/passwd", "escape/secret.md", "secret-link.md", ".kts/kts.db",
             "index-link/kts.db", "sub/a-link.md", "sub/../../outside/secret.md", "."]
    for n, path in enumerate(paths):
        doc_id = "0123456789abcdef" if n % 2 else "../../../x"
        add("record_paths", f"path-{n}", f"{path}\n{doc_id}".encode())

    for path in sorted((here / "seeds" / "config").glob("*.toml")):
        add("config", path.name, path.read_bytes())

    for target, count in sorted(counts.items()):
        print(f"{target}: {count} seeds")


if __name__ == "__main__":
    main()
