#!/usr/bin/env bash
# Embedding benchmark: kts-embed (release build) against Python onnxruntime on
# the same model, the same token ids and the same machine, in the same run.
#
#   pipelines/bench/embed.sh [COUNT]     # default: 300 chunks
#
# Takes the first COUNT chunks of 150-256 tokens from corpora/rust-rfcs
# (kts-crawl | kts-convert | kts-chunk --chunks-only, on a copy of the corpus),
# then embeds them with threads 1/2 and batch 1/8, kts-embed and Python
# alternating, each configuration KTS_BENCH_REPS times (default 3), and prints
# a Markdown table of the medians: chunks/s, tokens/s and the kts/Python ratio.
# Both sides are timed after the model is loaded: tokenising and inference (and
# for kts-embed its JSONL reading and writing too). The token counts must match.
#
# Needs models/fetch to have run. Python: $KTS_BENCH_PYTHON, else a venv made
# once in ${TMPDIR:-/tmp}/kts-bench-venv (pip install onnxruntime==1.31.1
# tokenizers numpy). Env: KTS_SHARED_DIR (default <repo>/../shared),
# CARGO_TARGET_DIR, KTS_BENCH_REPS, KTS_BENCH_MODEL (the model both sides run).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
bin=$target/release
models=$root/models
model=${KTS_BENCH_MODEL:-all-minilm-l6-v2-q8}
count=${1:-300}
reps=${KTS_BENCH_REPS:-3}
corpus=$shared/corpora/rust-rfcs

say() { echo "embed: $*" >&2; }

[[ -d $corpus ]] || { say "corpus $corpus is missing (set KTS_SHARED_DIR)"; exit 2; }
[[ -f $models/cache/$model/model.onnx ]] || { say "no model files: run models/fetch"; exit 2; }

say "cargo build --release (kts-crawl, kts-convert, kts-chunk, kts-embed)"
(cd "$root" && cargo build --release --quiet -p kts-crawl -p kts-convert -p kts-chunk -p kts-embed)

python=${KTS_BENCH_PYTHON:-}
if [[ -z $python ]]; then
    venv=${TMPDIR:-/tmp}/kts-bench-venv
    if ! "$venv/bin/python" -c 'import onnxruntime, tokenizers, numpy' 2>/dev/null; then
        say "making the Python baseline's venv in $venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check onnxruntime==1.31.1 tokenizers numpy
    fi
    python=$venv/bin/python
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kts-bench-embed.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The Python side: `select` picks the chunks, `run` is the baseline.
cat >"$work/baseline.py" <<'PY'
#!/usr/bin/env python3
"""Helpers of pipelines/bench/embed.sh (needs onnxruntime, tokenizers, numpy).

    embed_baseline.py select MODELS_DIR MODEL_ID COUNT < chunks.jsonl > picked.jsonl
        the first COUNT kts.chunk/1 records of 150 to 256 tokens (before truncation)
    embed_baseline.py run MODELS_DIR MODEL_ID THREADS BATCH < picked.jsonl
        embeds the chunks' texts with Python onnxruntime as kts-embed does
        (same tokenizer.json and truncation, mean pooling over the mask, L2
        normalisation, batches of similar length when BATCH > 1) and prints
        {"chunks", "tokens", "seconds"}: tokenising and inference, after the
        model is loaded
"""

import json
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def manifest_of(models, model_id):
    with open(Path(models) / f"{model_id}.json", encoding="utf-8") as f:
        return json.load(f)


def tokenizer_of(models, manifest, truncate=True):
    tokenizer = Tokenizer.from_file(str(Path(models) / "cache" / manifest["id"] / manifest["tokenizer"]))
    tokenizer.no_padding()
    if truncate:
        tokenizer.enable_truncation(max_length=manifest["max_tokens"])
    else:
        tokenizer.no_truncation()
    return tokenizer


def chunk_texts(lines):
    for line in lines:
        record = json.loads(line)
        if record.get("schema") == "kts.chunk/1":
            yield line, record["text"]


def select(models, model_id, count):
    manifest = manifest_of(models, model_id)
    tokenizer = tokenizer_of(models, manifest, truncate=False)
    picked = 0
    for line, text in chunk_texts(sys.stdin):
        tokens = len(tokenizer.encode(manifest["document_prefix"] + text).ids)
        if 150 <= tokens <= manifest["max_tokens"]:
            sys.stdout.write(line)
            picked += 1
            if picked == count:
                break


def session_of(models, manifest, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    path = str(Path(models) / "cache" / manifest["id"] / manifest["model"])
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def run_batch(session, manifest, encodings):
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for row, e in enumerate(encodings):
        ids[row, : len(e.ids)] = e.ids
        types[row, : len(e.ids)] = e.type_ids
        mask[row, : len(e.ids)] = 1
    names = manifest["inputs"]
    feed = {names["input_ids"]: ids, names["attention_mask"]: mask}
    if names.get("token_type_ids"):
        feed[names["token_type_ids"]] = types
    (hidden,) = session.run([manifest["output"]], feed)
    summed = (hidden * mask[:, :, None]).sum(axis=1)
    vectors = summed / mask.sum(axis=1, keepdims=True)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def run(models, model_id, threads, batch):
    manifest = manifest_of(models, model_id)
    tokenizer = tokenizer_of(models, manifest)
    session = session_of(models, manifest, threads)
    texts = [manifest["document_prefix"] + text for _, text in chunk_texts(sys.stdin)]
    started = time.perf_counter()
    encodings = [tokenizer.encode(text) for text in texts]
    order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids)) if batch > 1 else list(range(len(encodings)))
    for at in range(0, len(order), batch):
        run_batch(session, manifest, [encodings[i] for i in order[at : at + batch]])
    seconds = time.perf_counter() - started
    tokens = sum(len(e.ids) for e in encodings)
    print(json.dumps({"chunks": len(texts), "tokens": tokens, "seconds": seconds}))


def main(argv):
    if len(argv) == 4 and argv[0] == "select":
        select(argv[1], argv[2], int(argv[3]))
    elif len(argv) == 5 and argv[0] == "run":
        run(argv[1], argv[2], int(argv[3]), int(argv[4]))
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
PY
baseline() { "$python" "$work/baseline.py" "$@"; }

say "chunking a copy of $corpus"
cp -R "$corpus" "$work/corpus"
rm -rf "$work/corpus/.kts"
"$bin/kts-crawl" --quiet "$work/corpus" | "$bin/kts-convert" --quiet |
    "$bin/kts-chunk" --quiet --chunks-only >"$work/all.jsonl"
baseline select "$models" "$model" "$count" <"$work/all.jsonl" >"$work/chunks.jsonl"
picked=$(wc -l <"$work/chunks.jsonl")
((picked > 0)) || { say "no chunks of 150-256 tokens found"; exit 1; }

# kts THREADS BATCH -> "chunks tokens seconds", from kts-embed --stats.
kts() {
    "$bin/kts-embed" --models "$models" --model "$model" --no-cache --stats --quiet \
        --threads "$1" --batch "$2" <"$work/chunks.jsonl" 2>&1 >/dev/null |
        sed -nE 's/^kts-embed: ([0-9]+) chunks: [0-9]+ embedded \(([0-9]+) tokens.* ([0-9.]+) s, .*/\1 \2 \3/p'
}
# py THREADS BATCH -> "chunks tokens seconds".
py() {
    baseline run "$models" "$model" "$1" "$2" <"$work/chunks.jsonl" |
        "$python" -c 'import json, sys; r = json.load(sys.stdin); print(r["chunks"], r["tokens"], r["seconds"])'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

load_before=$(uptime)
rows=()
for threads in 1 2; do
    for batch in 1 8; do
        : >"$work/kts.s"
        : >"$work/py.s"
        for ((r = 1; r <= reps; r++)); do
            say "threads $threads, batch $batch, run $r/$reps"
            read -r kc kt ks <<<"$(kts "$threads" "$batch")"
            read -r pc pt ps <<<"$(py "$threads" "$batch")"
            if [[ -z ${kc:-} || -z ${pc:-} ]]; then say "a run failed"; exit 1; fi
            if [[ $kt != "$pt" || $kc != "$pc" ]]; then
                say "token counts differ: kts-embed $kc chunks $kt tokens, Python $pc chunks $pt tokens"
                exit 1
            fi
            echo "$ks" >>"$work/kts.s"
            echo "$ps" >>"$work/py.s"
        done
        ks=$(median <"$work/kts.s")
        ps=$(median <"$work/py.s")
        rows+=("$(awk -v t="$threads" -v b="$batch" -v c="$kc" -v k="$kt" -v ks="$ks" -v ps="$ps" 'BEGIN {
            printf "| %d | %d | %.1f | %.0f | %.1f | %.0f | %.2f |", t, b, c / ks, k / ks, c / ps, k / ps, ps / ks
        }')")
    done
done
load_after=$(uptime)

tokens=$kt
echo
echo "## Embedding benchmark ($model, $picked chunks of rust-rfcs, $(nproc) cores, $(date -u +%Y-%m-%d))"
echo
echo "Median of $reps runs; $tokens tokens in all ($((tokens / picked)) per chunk on average)."
echo "Load before: ${load_before#*load average: }; after: ${load_after#*load average: }."
echo
echo "| threads | batch | kts-embed chunks/s | kts-embed tokens/s | Python ort chunks/s | Python ort tokens/s | kts / Python |"
echo "|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"
