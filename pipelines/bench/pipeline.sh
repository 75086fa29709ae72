#!/usr/bin/env bash
# Full-pipeline benchmark: `kts-crawl | kts-convert | kts-chunk | kts-embed |
# kts-index` on one corpus, each stage timed on its own (release build, the
# default model), to see where the time goes and whether the stages overlap.
#
#   pipelines/bench/pipeline.sh [CORPUS]   # default: corpora/rust-rfcs
#
# The corpus is copied to a temporary folder first, so that .kts/ is written
# there. Prints a Markdown table: per stage its CPU seconds (user + system),
# the moment it ended, and its peak RSS; then the wall time of the whole and
# the overlap (the stages' CPU seconds over the wall time: 1.0 means they
# ran one after another, 2.0 is the most 2 cores can give).
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR,
# KTS_BENCH_MODEL (the model kts-embed runs; default: kts-embed's default).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
bin=${CARGO_TARGET_DIR:-$root/target}/release
corpus=${1:-corpora/rust-rfcs}
model=${KTS_BENCH_MODEL:-}
[[ -d $shared/$corpus ]] || { echo "pipeline: corpus $shared/$corpus is missing (set KTS_SHARED_DIR)" >&2; exit 2; }
for tool in kts-crawl kts-convert kts-chunk kts-embed kts-index; do
    [[ -x $bin/$tool ]] || { echo "pipeline: $bin/$tool is missing (make build)" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$shared/$corpus" "$work/corpus"
chmod -R u+w "$work/corpus"
dir=$work/corpus

# Each stage under GNU time: CPU seconds, peak RSS, and the moment it ended.
stage() {
    local name=$1
    shift
    /usr/bin/time -f "%U %S %M" -o "$work/$name.time" "$@"
    date +%s.%N >"$work/$name.end"
}
start=$(date +%s.%N)
stage crawl "$bin/kts-crawl" "$dir" \
    | stage convert "$bin/kts-convert" \
    | stage chunk "$bin/kts-chunk" \
    | stage embed "$bin/kts-embed" ${model:+--model "$model"} \
    | stage index "$bin/kts-index" "$dir" 2>"$work/index.log"
end=$(date +%s.%N)

chunks=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from chunks").fetchone()[0])' "$dir/.kts/kts.db")
printf '%s: %s chunks, model %s\n\n' "$corpus" "$chunks" "${model:-the default}"
printf '| stage | CPU s | ended at s | peak RSS MB |\n|---|---:|---:|---:|\n'
total_cpu=0
for name in crawl convert chunk embed index; do
    read -r user sys rss <"$work/$name.time"
    cpu=$(echo "$user + $sys" | bc)
    total_cpu=$(echo "$total_cpu + $cpu" | bc)
    ended=$(echo "$(cat "$work/$name.end") - $start" | bc)
    printf '| %s | %.1f | %.1f | %d |\n' "$name" "$cpu" "$ended" $((rss / 1024))
done
wall=$(echo "$end - $start" | bc)
printf '\nwall %.1f s, CPU %.1f s, overlap %.2f\n' "$wall" "$total_cpu" "$(echo "$total_cpu / $wall" | bc -l)"
