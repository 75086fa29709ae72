#!/usr/bin/env bash
# Graph benchmark: kts-graph build time and size against indexing the same
# corpus without embeddings, the questions' time and memory, and the
# incremental update after one file changes.
#
#   pipelines/bench/graph.sh [CORPUS...]   # default: corpora/rust-rfcs corpora/tldr-pages-en generated:10000
#   pipelines/bench/graph.sh generated:10000
#
# Each corpus (a folder under the shared data, or generated:N for N Markdown
# documents written by graph_corpus.py) is copied to a temporary folder,
# indexed with `kts-crawl | kts-convert | kts-chunk | kts-index` (release
# build, no embeddings), then measured:
#   - index: the indexing pipeline's wall time (the baseline);
#   - graph: `kts-graph DIR --stats` on the fresh index (extraction of every
#     document, then the graph built once to count its nodes and edges);
#   - size: nodes and edges by kind, and what the graph tables (the
#     extraction rows and the snapshot) add to kts.db;
#   - questions: wall time and peak RSS of `kts-query DIR --mode bm25
#     --context "what is NAME"` (NAME the most central entity) and of
#     `kts-graph DIR central`, both read from the graph snapshot;
#   - unchanged: `kts-graph DIR` again (nothing to extract);
#   - one file changed: the indexing pipeline (--changed-only) and kts-graph
#     again, after a paragraph is appended to one document.
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
if (($# > 0)); then corpora=("$@"); else corpora=(corpora/rust-rfcs corpora/tldr-pages-en generated:10000); fi
for c in "${corpora[@]}"; do
    [[ $c == generated:* || -d $shared/$c ]] || { echo "graph-bench: $shared/$c is missing (set KTS_SHARED_DIR)" >&2; exit 2; }
done

echo "== cargo build --release" >&2
(cd "$root" && cargo build --release --quiet --bins)
bin=$target/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

# "MS MB": wall time and peak RSS of a command (its stdout discarded).
measured() {
    /usr/bin/time -f '%e %M' "$@" 2>&1 >/dev/null | tail -n 1 \
        | awk '{ printf "%d %d\n", $1 * 1000, $2 / 1024 }'
}

index() {
    "$bin/kts-crawl" "$@" | "$bin/kts-convert" --quiet | "$bin/kts-chunk" --quiet \
        | "$bin/kts-index" --quiet "${@: -1}" 2>/dev/null
}

echo "| corpus | documents | index ms | graph ms | graph/index | nodes | edges | graph tables | --context ms | --context MB | central ms | central MB | unchanged ms | 1 changed: index ms | 1 changed: graph ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in "${corpora[@]}"; do
    scope=$work/$(basename "${c/:/-}")
    if [[ $c == generated:* ]]; then
        python3 "$root/pipelines/bench/graph_corpus.py" "$scope" "${c#generated:}"
    else
        cp -r "$shared/$c" "$scope"
        rm -rf "$scope/.kts"
    fi

    t=$(date +%s%N)
    index "$scope"
    index_ms=$(ms "$t")
    before=$(stat -c %s "$scope/.kts/kts.db")

    t=$(date +%s%N)
    stats=$("$bin/kts-graph" "$scope" --stats 2>&1)
    graph_ms=$(ms "$t")
    after=$(stat -c %s "$scope/.kts/kts.db")
    echo "$stats" | sed "s|^|  $(basename "$c"): |" >&2
    nodes=$(echo "$stats" | sed -n 's/.*graph: \([0-9]*\) nodes.*/\1/p')
    edges=$(echo "$stats" | sed -n 's/.*), \([0-9]*\) edges.*/\1/p')

    name=$("$bin/kts-graph" "$scope" central --top 1 | sed -n 's/.*"name":"\([^"]*\)".*/\1/p')
    read -r context_ms context_mb < <(measured "$bin/kts-query" "$scope" --mode bm25 --context "what is $name")
    read -r central_ms central_mb < <(measured "$bin/kts-graph" "$scope" central)

    t=$(date +%s%N)
    "$bin/kts-graph" "$scope" --quiet
    unchanged_ms=$(ms "$t")

    changed=$(find "$scope" -name '*.md' -not -path '*/.kts/*' | sort | sed -n 1p)
    printf '\nThe TokenCache uses the AuthService; see ERR-AUTH-401 and ERR-AUTH-401.\n' >>"$changed"
    t=$(date +%s%N)
    index --changed-only "$scope"
    reindex_ms=$(ms "$t")
    t=$(date +%s%N)
    update=$("$bin/kts-graph" "$scope" 2>&1)
    update_ms=$(ms "$t")
    echo "  $(basename "$c") after one change: $update" >&2

    documents=$(echo "$stats" | sed -n 's/.*DOCUMENT \([0-9]*\).*/\1/p')
    ratio=$(awk -v g="$graph_ms" -v i="$index_ms" 'BEGIN { printf "%.2f", g / i }')
    growth=$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.1f MB", (a - b) / 1e6 }')
    echo "| $(basename "$c") | $documents | $index_ms | $graph_ms | $ratio | $nodes | $edges | $growth | $context_ms | $context_mb | $central_ms | $central_mb | $unchanged_ms | $reindex_ms | $update_ms |"
done
echo
echo "($(uptime | sed 's/.*load/load/'))"
