#!/usr/bin/env bash
# Update benchmark: one document replaced in a large scope with vectors, as
# kts-index replaces it, against rewriting vectors.bin whole.
#
#   pipelines/bench/update.sh [N...]     # default: 100000 1000000
#
# For each N, writes a scope of N chunks of real text with random unit
# vectors through kts-store (vectors.bin and the lexical index built), then
# replaces a random document three times: each run prints the commit, the
# vectors (vectors.delta beside vectors.bin), the lexical index, and the time
# vectors.bin takes to write whole at that size. The target: under 1 s at 1M
# chunks, search staying exact (bench update checks that vectors.bin with its
# delta answers; the tests check the answers against sqlite-vec).
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR, KTS_BENCH_DIR
# (work folder, default a temporary one, removed at the end).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
if (($# > 0)); then sizes=("$@"); else sizes=(100000 1000000); fi
corpus=$shared/corpora
[[ -d $corpus ]] || { echo "update-bench: $corpus is missing (set KTS_SHARED_DIR)" >&2; exit 2; }

work=${KTS_BENCH_DIR:-}
if [[ -z $work ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

echo "== cargo build --release (bench example)" >&2
(cd "$root" && cargo build --release --quiet -p kts-query --example bench)
bench=$target/release/examples/bench

for n in "${sizes[@]}"; do
    dir=$work/n$n
    rm -rf "$dir"
    echo
    echo "## $n chunks ($(uptime | sed 's/.*load/load/'))"
    "$bench" build "$n" "$corpus" "$dir"
    for _ in 1 2 3; do
        "$bench" update "$dir/scope"
    done
    rm -rf "$dir"
done
