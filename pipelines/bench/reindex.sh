#!/usr/bin/env bash
# Batch reindex benchmark: a generated knowledge root of N scopes (default
# 10000) indexed by pipelines/reindex.mk, then re-run three times.
#
#   pipelines/bench/reindex.sh [N]
#
#   1. knowledge_root.py writes N scopes of 5-10 real documents (from
#      <shared>/corpora) plus shared template documents, under /tmp;
#   2. first run: every scope indexed (time, disk by kind of file);
#   3. unchanged: the same again, nothing to do (time);
#   4. touched: one file's mtime changed, not its content (time);
#   5. edited: a line appended to that file (time; one scope reindexed);
#   then the root is removed.
#
# Keyword-only by default (EMBED=0): kts-embed loads the model once per scope
# it runs in (about 0.5 s each), which would make a 10,000-scope first run
# last over an hour on two cores; EMBED=1 measures it anyway.
#
# Env: EMBED (0), GRAPH (1), JOBS (2), BIN (default <repo>/target/release),
#      KTS_SHARED_DIR (default <repo>/../shared), TMPDIR.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
scopes=${1:-10000}
embed=${EMBED:-0} graph=${GRAPH:-1} jobs=${JOBS:-2}
bin=${BIN:-$repo/target/release}
[[ -x $bin/kts-crawl ]] || { echo "reindex-bench: no kts binaries in $bin (cargo build --release --bins)" >&2; exit 2; }

# Measured at 1,000 scopes: about 0.5 MB a scope keyword-only; embeddings
# (cached vectors, embed.jsonl) add several times that.
need_mb=$(( scopes * (embed == 0 ? 6 : 30) / 10 + 100 ))
free_mb=$(df -Pm "${TMPDIR:-/tmp}" | awk 'NR == 2 { print $4 }')
if ((free_mb < need_mb)); then
    echo "reindex-bench: $scopes scopes need about $need_mb MB in ${TMPDIR:-/tmp}; $free_mb MB free" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kts-reindex-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root

# Runs the batch reindex; prints its wall time in seconds.
reindex() {
    local t=$EPOCHREALTIME status=0
    make -f "$here/../reindex.mk" ROOT="$root" BIN="$bin" EMBED="$embed" GRAPH="$graph" -j "$jobs" \
        > "$work/run.out" 2>&1 || status=$?
    local s; s=$(awk -v a="$t" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    sed -n 's/^reindex [^:]*: /  /p' "$work/run.out" >&2
    if ((status != 0)); then
        echo "reindex-bench: the run failed:" >&2
        tail -n 20 "$work/run.out" >&2
        exit 1
    fi
    echo "$s"
}

# Disk use (allocated MB) of the sources, stores, converted documents, stage
# caches and the rest of .kts/.
disk() {
    find "$root" -type f -printf '%b %p\n' | awk '
        { kb = $1 / 2; p = $0 }
        p ~ /\/\.kts\/kts\.db/ { store += kb; next }
        p ~ /\/\.kts\/documents\// { docs += kb; next }
        p ~ /\/\.kts\/cache\// { cache += kb; next }
        p ~ /\/\.kts\// { other += kb; next }
        { src += kb }
        END {
            printf "%.0f MB (sources %.0f, kts.db %.0f, .kts/documents %.0f, stage cache %.0f, other .kts %.0f)",
                (src + store + docs + cache + other) / 1024, src / 1024, store / 1024, docs / 1024,
                cache / 1024, other / 1024
        }'
}

echo "== $scopes scopes, EMBED=$embed GRAPH=$graph, -j $jobs, in $root" >&2
t=$EPOCHREALTIME
python3 "$here/knowledge_root.py" "$root" --scopes "$scopes"
generate=$(awk -v a="$t" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
documents=$(find "$root" -mindepth 2 -type f -not -path '*/.*' | wc -l)

echo "== first run" >&2
first=$(reindex)
space=$(disk)

echo "== unchanged" >&2
unchanged=$(reindex)

file=$(find "$root" -mindepth 2 -type f -name '*.md' -not -path '*/.*' | sort | sed -n 1p)
echo "== touched (mtime only): $file" >&2
touch "$file"
touched=$(reindex)

echo "== edited: $file" >&2
printf '\nAppended by the benchmark: a new sentence about the okapi.\n' >> "$file"
edited=$(reindex)
grep -q '1 reindexed' "$root/.kts-reindex/summary.txt" || { echo "reindex-bench: the edit was not reindexed" >&2; exit 1; }

per_scope=$(awk -v s="$first" -v n="$scopes" 'BEGIN { printf "%.1f", 1000 * s / n }')
echo
echo "| scopes | documents | generate s | first run s | ms/scope | unchanged s | touched s | edited s | disk |"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
echo "| $scopes | $documents | $generate | $first | $per_scope | $unchanged | $touched | $edited | $space |"
if ((scopes < 10000)); then
    awk -v f="$first" -v u="$unchanged" -v n="$scopes" 'BEGIN {
        printf "\nprojected for 10,000 scopes (linear): first run %.0f s, unchanged %.0f s\n", f * 10000 / n, u * 10000 / n }'
fi
echo "($(nproc) cores, $(uptime | sed 's/.*load/load/'))"
