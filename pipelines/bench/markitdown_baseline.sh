#!/usr/bin/env bash
# markitdown baseline: converts the fixture files that have ground truth with
# markitdown (the Python converter, in a venv under target/) and scores its
# Markdown with kts's own scorer (the kts-quality binary of kts-tests: the same
# code as tests/tests/quality.rs), so the figures compare like with like.
#
#   pipelines/bench/markitdown_baseline.sh
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR, PYTHON.
# Writes target/markitdown-baseline/<fixture>.md (or .err), prints the report
# and writes the per-file scores to target/quality-report-markitdown.json.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
fixtures=$shared/fixtures
if [[ ! -f $fixtures/manifest.tsv ]]; then
    echo "markitdown_baseline: $fixtures/manifest.tsv is missing (set KTS_SHARED_DIR)" >&2
    exit 2
fi
target=${CARGO_TARGET_DIR:-$root/target}
venv=$target/markitdown-venv
out=$target/markitdown-baseline
python=${PYTHON:-python3}

if [[ ! -x $venv/bin/markitdown ]]; then
    echo "== creating $venv and installing markitdown[all] from PyPI" >&2
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'markitdown[all]'
fi
version=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("markitdown"))')

echo "== building kts-quality (the scorer)" >&2
(cd "$root" && cargo build --quiet --release -p kts-tests --features shared-data --bin kts-quality)
quality=$target/release/kts-quality

rm -rf "$out"
mkdir -p "$out"
"$quality" --list >"$out/files.txt"
echo "== converting $(wc -l <"$out/files.txt") files with markitdown $version" >&2

# One Python process for all files (its start-up is slow); each file gets a
# time limit, and a failure is written to <fixture>.err for the scorer.
"$venv/bin/python" - "$fixtures" "$out" "$out/files.txt" <<'PY'
import os, signal, sys, time, traceback
from markitdown import MarkItDown

fixtures, out, listing = sys.argv[1:4]
converter = MarkItDown()  # defaults: no plugins, no LLM, data URIs left out

class Timeout(Exception):
    pass

def alarm(*_):
    raise Timeout("timed out after 120 s")

signal.signal(signal.SIGALRM, alarm)
ok = failed = 0
started = time.time()
for rel in open(listing, encoding="utf-8").read().splitlines():
    if not rel.strip():
        continue
    dest = os.path.join(out, rel)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    signal.alarm(120)
    try:
        result = converter.convert(os.path.join(fixtures, rel))
        signal.alarm(0)
        with open(dest + ".md", "w", encoding="utf-8") as f:
            f.write(result.markdown or "")
        ok += 1
    except BaseException as e:  # noqa: BLE001 - every failure is recorded
        signal.alarm(0)
        if isinstance(e, KeyboardInterrupt):
            raise
        with open(dest + ".err", "w", encoding="utf-8") as f:
            f.write(traceback.format_exc())
            f.write(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}\n")
        failed += 1
print(f"markitdown: {ok} converted, {failed} failed in {time.time() - started:.1f} s",
      file=sys.stderr)
PY

"$quality" --markdown-dir "$out" --label "markitdown $version" \
    --json "$target/quality-report-markitdown.json"
