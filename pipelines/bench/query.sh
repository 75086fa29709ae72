#!/usr/bin/env bash
# Query benchmark: hybrid retrieval latency of kts-query at 10k, 100k and 400k chunks.
#
#   pipelines/bench/query.sh [N...]     # default: 10000 100000 400000
#   pipelines/bench/query.sh 1000000    # the 1M-vector figures (~7 GB of disk)
#
# For each N, builds a scope of N chunks of real text (paragraphs of
# shared/corpora, 10 chunks per document) with random unit vectors (384 dims,
# labelled with the default model's id) and 200 question-like queries with their own
# random vectors, indexes it (up to 100k chunks: a JSONL stream through
# kts-index; above: written through kts-store directly, as the JSONL would
# take gigabytes), then measures:
#   - in-process: each query of one `kts-query --batch`-style loop
#     (the `bench` example runs kts-query's Searcher), hybrid, bm25 and vector;
#   - cold: one `kts-query DIR --batch` process per query (50 queries), hybrid,
#     with the query vector given; and one `kts-query DIR "question"` process
#     per query (20 queries) embedding the question with the real model;
#   - BM25 top-10 through kts-store: from the lexical index and from FTS5
#     (the fallback), and the overlap of their top-10 lists;
#   - vector top-10 through kts-store: from vectors.bin and from sqlite-vec
#     (the fallback), with recall@10 against an exact f32 scan;
#   - the floor: a plain scan of the same vectors memory-mapped from an f32
#     file, top 10 — what an exact f32 search costs at memory bandwidth.
# Prints p50/p95 per figure, with `uptime` (the machine is shared).
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR, KTS_BENCH_DIR
# (work folder, default a temporary one, removed at the end).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
if (($# > 0)); then sizes=("$@"); else sizes=(10000 100000 400000); fi
corpus=$shared/corpora
[[ -d $corpus ]] || { echo "query-bench: $corpus is missing (set KTS_SHARED_DIR)" >&2; exit 2; }

work=${KTS_BENCH_DIR:-}
if [[ -z $work ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

echo "== cargo build --release (kts-index, kts-query, kts-embed, bench example)" >&2
(cd "$root" && cargo build --release --quiet -p kts-index -p kts-query -p kts-embed --bins --example bench)
bin=$target/release
bench=$bin/examples/bench
source "$root/pipelines/bench/timing.sh"

# p50/p95 of the cold runs: one process per query.
cold() {
    local scope=$1 queries=$2 n=$3
    head -n "$n" "$queries" | while IFS= read -r line; do
        printf '%s\n' "$line" | microseconds "$bin/kts-query" "$scope" --batch
    done | percentiles "cold process --mode hybrid"
}

# p50/p95 of a cold process that embeds the question with the model (needs models/fetch).
cold_with_model() {
    local scope=$1 queries=$2 n=$3
    if [[ ! -f $root/models/cache/all-minilm-l6-v2-q8/model.onnx ]]; then
        echo "query-bench: the model is missing: run models/fetch first" >&2
        exit 2
    fi
    query_texts "$queries" "$n" | while IFS= read -r question; do
        microseconds "$bin/kts-query" "$scope" "$question"
    done | percentiles "cold process, question embedded by the model"
}

for n in "${sizes[@]}"; do
    dir=$work/n$n
    scope=$dir/scope
    rm -rf "$scope" && mkdir -p "$scope"
    echo
    echo "## $n chunks ($(uptime | sed 's/.*load/load/'))"
    if ((n <= 100000)); then
        echo "== $n chunks: writing the stream" >&2
        "$bench" stream "$n" "$corpus" "$dir"
        t0=$(date +%s%N)
        "$bin/kts-index" "$scope" <"$dir/stream.jsonl"
        t1=$(date +%s%N)
        rm "$dir/stream.jsonl"
        echo "index: $(((t1 - t0) / 1000000)) ms for $n chunks"
    else
        echo "== $n chunks: writing the store" >&2
        "$bench" build "$n" "$corpus" "$dir"
    fi
    echo "store: $(du -sh "$scope/.kts/kts.db" | cut -f1) kts.db, $(du -sh "$scope/.kts/vectors.bin" | cut -f1) vectors.bin"
    for mode in hybrid bm25 vector; do
        "$bench" query "$scope" "$dir/queries.jsonl" --mode "$mode"
    done
    "$bench" lexical "$scope" "$dir/queries.jsonl"
    cold "$scope" "$dir/queries.jsonl" 50
    cold_with_model "$scope" "$dir/queries.jsonl" 20
    "$bench" recall "$scope" "$dir/queries.jsonl"
    "$bench" floor "$dir/vectors.f32" "$dir/queries.jsonl"
    rm -rf "$dir"
done

