#!/usr/bin/env bash
# Graph benchmark: kts-graph build time and size against indexing the same
# corpus without embeddings, and the incremental update after one file changes.
#
#   pipelines/bench/graph.sh [CORPUS...]   # default: corpora/rust-rfcs corpora/tldr-pages-en
#
# Each corpus (a folder under the shared data) is copied to a temporary folder,
# indexed with `kts-crawl | kts-convert | kts-chunk | kts-index` (release
# build, no embeddings), then measured:
#   - index: the indexing pipeline's wall time (the baseline);
#   - graph: `kts-graph DIR --stats` on the fresh index (extraction of every
#     document, then the graph built once to count its nodes and edges);
#   - size: nodes and edges by kind, and what the graph tables add to kts.db;
#   - unchanged: `kts-graph DIR` again (nothing to extract);
#   - one file changed: the indexing pipeline (--changed-only) and kts-graph
#     again, after a paragraph is appended to one document.
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
if (($# > 0)); then corpora=("$@"); else corpora=(corpora/rust-rfcs corpora/tldr-pages-en); fi
for c in "${corpora[@]}"; do
    [[ -d $shared/$c ]] || { echo "graph-bench: $shared/$c is missing (set KTS_SHARED_DIR)" >&2; exit 2; }
done

echo "== cargo build --release" >&2
(cd "$root" && cargo build --release --quiet --bins)
bin=$target/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ms() { echo $((($(date +%s%N) - $1) / 1000000)); }

index() {
    "$bin/kts-crawl" "$@" | "$bin/kts-convert" --quiet | "$bin/kts-chunk" --quiet \
        | "$bin/kts-index" --quiet "${@: -1}" 2>/dev/null
}

echo "| corpus | documents | index ms | graph ms | graph/index | nodes | edges | graph tables | unchanged ms | 1 changed: index ms | 1 changed: graph ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for c in "${corpora[@]}"; do
    scope=$work/$(basename "$c")
    cp -r "$shared/$c" "$scope"
    rm -rf "$scope/.kts"

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
    echo "| $(basename "$c") | $documents | $index_ms | $graph_ms | $ratio | $nodes | $edges | $growth | $unchanged_ms | $reindex_ms | $update_ms |"
done
echo
echo "($(uptime | sed 's/.*load/load/'))"
