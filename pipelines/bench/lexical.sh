#!/usr/bin/env bash
# Lexical benchmark: BM25 top-10 from the lexical index (tantivy) against FTS5,
# side by side in one process, at growing scope sizes.
#
#   pipelines/bench/lexical.sh [N...]     # default: 10000 100000 1000000
#
# For each N, writes a keyword-only scope of N chunks of real text (paragraphs
# of shared/corpora, 10 chunks per document) through kts-store, builds its
# lexical index as kts-index does, and times the same 200 question-like
# queries on both paths (p50/p95), with the overlap of their top-10 lists;
# then what a user's one-off question costs: one `kts-query DIR --mode bm25
# "question"` process per query (50 queries), start-up included.
# The targets are ratios: p95 at 1M within 3x of p95 at 10k, and the index
# against FTS5 at the same size.
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR, KTS_BENCH_DIR
# (work folder, default a temporary one, removed at the end).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
if (($# > 0)); then sizes=("$@"); else sizes=(10000 100000 1000000); fi
corpus=$shared/corpora
[[ -d $corpus ]] || { echo "lexical-bench: $corpus is missing (set KTS_SHARED_DIR)" >&2; exit 2; }

work=${KTS_BENCH_DIR:-}
if [[ -z $work ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

echo "== cargo build --release (kts-query, bench example)" >&2
(cd "$root" && cargo build --release --quiet -p kts-query --bins --example bench)
bench=$target/release/examples/bench
source "$root/pipelines/bench/timing.sh"

# p50/p95 of one kts-query process per question, BM25 only.
cold() {
    local scope=$1 queries=$2
    query_texts "$queries" 50 | while IFS= read -r question; do
        microseconds "$target/release/kts-query" "$scope" --mode bm25 "$question"
    done | percentiles "cold process kts-query --mode bm25"
}

for n in "${sizes[@]}"; do
    dir=$work/n$n
    rm -rf "$dir" && mkdir -p "$dir"
    echo
    echo "## $n chunks ($(uptime | sed 's/.*load/load/'))"
    "$bench" build "$n" "$corpus" "$dir" --no-vectors
    echo "store: $(du -sh "$dir/scope/.kts/kts.db" | cut -f1) kts.db, $(du -sh "$dir/scope/.kts/lexical" | cut -f1) lexical index"
    "$bench" lexical "$dir/scope" "$dir/queries.jsonl"
    cold "$dir/scope" "$dir/queries.jsonl"
    rm -rf "$dir"
done
