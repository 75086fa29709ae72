#!/usr/bin/env bash
# Ingest benchmark: `kts-crawl DIR | kts-convert | kts-chunk` on the shared
# corpora (release build), then the unchanged re-run
# (`kts-crawl --changed-only DIR | kts-convert | kts-chunk`).
#
#   pipelines/bench/ingest.sh [CORPUS...]   # default: corpora/rust-rfcs corpora/tldr-pages-en fixtures
#
# Each corpus (a folder under the shared data) is copied to a temporary folder
# first, so that .kts/ is written there and never into shared/. Prints a
# Markdown table: files, input MB, documents, errors, chunks, wall time,
# documents/s, MB/s, peak RSS of each stage, and the re-run time and its ratio
# to the first run.
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR,
#      KTS_BENCH_BUDGET (seconds for the whole script, build included; default 600).
# The script stops itself when the budget runs out (exit 3). A first run may
# spend most of it on the release build; the build is reused afterwards.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
budget=${KTS_BENCH_BUDGET:-600}
deadline=$((SECONDS + budget))
if (($# > 0)); then corpora=("$@"); else corpora=(corpora/rust-rfcs corpora/tldr-pages-en fixtures); fi

# Seconds left in the budget; stops the script when there are none.
left() {
    local r=$((deadline - SECONDS))
    if ((r <= 2)); then
        echo "ingest: the ${budget} s budget ran out: stopping (raise KTS_BENCH_BUDGET)" >&2
        exit 3
    fi
    echo "$r"
}

for c in "${corpora[@]}"; do
    if [[ ! -d $shared/$c ]]; then
        echo "ingest: corpus $shared/$c is missing (set KTS_SHARED_DIR)" >&2
        exit 2
    fi
done

# GNU time for each stage's peak RSS.
if [[ ! -x /usr/bin/time ]] || ! /usr/bin/time -v true 2>/dev/null; then
    echo "== installing GNU time (Debian package \`time\`)" >&2
    if [[ $(id -u) -eq 0 ]]; then
        timeout "$(left)" apt-get update -qq >/dev/null
        timeout "$(left)" apt-get install -y -qq time >/dev/null
    else
        timeout "$(left)" sudo apt-get update -qq >/dev/null
        timeout "$(left)" sudo apt-get install -y -qq time >/dev/null
    fi
fi

echo "== cargo build --release (kts-crawl, kts-convert, kts-chunk)" >&2
(cd "$root" && timeout "$(left)" cargo build --release --quiet -p kts-crawl -p kts-convert -p kts-chunk) || {
    status=$?
    if ((status == 124)); then
        echo "ingest: the release build outran the ${budget} s budget: stopping (it is reused next time)" >&2
        exit 3
    fi
    exit "$status"
}
bin=$target/release

work=$(mktemp -d "${TMPDIR:-/tmp}/kts-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run NAME DIR OUTDIR [CRAWL FLAGS...]: one timed pipeline run; writes
# OUTDIR/{files.jsonl,out.jsonl,crawl.time,convert.time,chunk.time,wall,status}.
run() {
    local dir=$1 out=$2
    shift 2
    mkdir -p "$out"
    local start end
    start=$(date +%s%N)
    # timeout signals its whole process group, so every stage stops with it.
    if ! timeout "$(left)" bash -c '
        bin=$1 dir=$2 out=$3; shift 3
        /usr/bin/time -v -o "$out/crawl.time" "$bin/kts-crawl" --quiet "$@" "$dir" |
            tee "$out/files.jsonl" |
            /usr/bin/time -v -o "$out/convert.time" "$bin/kts-convert" --quiet |
            /usr/bin/time -v -o "$out/chunk.time" "$bin/kts-chunk" --quiet >"$out/out.jsonl"
        echo "${PIPESTATUS[*]}" >"$out/status"
    ' bench "$bin" "$dir" "$out" "$@"; then
        echo "ingest: the pipeline on $dir outran the ${budget} s budget: stopping" >&2
        exit 3
    fi
    end=$(date +%s%N)
    echo $(((end - start) / 1000000)) >"$out/wall"
    # Exit statuses: crawl 0; convert/chunk 0, or 1 when some records failed.
    # (GNU time passes the tool's status on; a signal shows as 128+N.)
    read -r s_crawl s_tee s_convert s_chunk <"$out/status"
    if ((s_crawl != 0 || s_tee != 0 || s_convert > 1 || s_chunk > 1)); then
        echo "ingest: pipeline on $dir failed: exit statuses crawl=$s_crawl tee=$s_tee convert=$s_convert chunk=$s_chunk" >&2
        exit 1
    fi
}

rss_mb() { awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"; }
count() { grep -c "\"schema\":\"$1\"" "$2" || true; }

rows=()
for c in "${corpora[@]}"; do
    name=$(basename "$c")
    dir=$work/$name
    echo "== $c: copying to $dir" >&2
    cp -R "$shared/$c" "$dir"
    rm -rf "$dir/.kts"
    echo "== $c: crawl | convert | chunk" >&2
    run "$dir" "$work/$name.first"
    echo "== $c: unchanged re-run (crawl --changed-only)" >&2
    run "$dir" "$work/$name.again" --changed-only

    first=$work/$name.first again=$work/$name.again
    files=$(count kts.file/1 "$first/files.jsonl")
    bytes=$(grep -o '"size":[0-9]*' "$first/files.jsonl" | awk -F: '{ s += $2 } END { print s + 0 }')
    docs=$(count kts.doc/1 "$first/out.jsonl")
    errors=$(count kts.error/1 "$first/out.jsonl")
    chunks=$(count kts.chunk/1 "$first/out.jsonl")
    ms=$(<"$first/wall")
    again_ms=$(<"$again/wall")
    again_files=$(count kts.file/1 "$again/files.jsonl")
    rows+=("$(awk -v c="$c" -v files="$files" -v bytes="$bytes" -v docs="$docs" -v errors="$errors" \
        -v chunks="$chunks" -v ms="$ms" -v ams="$again_ms" -v af="$again_files" \
        -v r1="$(rss_mb "$first/crawl.time")" -v r2="$(rss_mb "$first/convert.time")" \
        -v r3="$(rss_mb "$first/chunk.time")" 'BEGIN {
            s = ms / 1000; mb = bytes / 1048576
            printf "| %s | %d | %.1f | %d | %d | %d | %.2f | %.0f | %.2f | %s / %s / %s | %.3f (%d files) | %.3f |",
                c, files, mb, docs, errors, chunks, s, docs / s, mb / s, r1, r2, r3, ams / 1000, af, ams / ms
        }')")
done

cores=$(nproc 2>/dev/null || echo "?")
echo
echo "## Ingest benchmark (release build, $cores cores, $(date -u +%Y-%m-%d))"
echo
echo "| corpus | files | input MB | docs | errors | chunks | wall s | docs/s | MB/s | peak RSS MB crawl / convert / chunk | unchanged re-run s | re-run / first |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"
printf '%s\n' "${rows[@]}"
