#!/usr/bin/env bash
# kts-spark benchmark, in Spark's local mode (one executor core a task slot):
#
#   pipelines/bench/spark.sh [--files N] [--scopes N]
#
#   1. split: one scope of the rust-rfcs corpus (all 648 RFCs, or the first
#      --files N), `kts-spark SCOPE --split E` on local[E] for E = 1 and 2
#      executors: the speed-up of 2 over 1;
#   2. whole root: a generated knowledge root of --scopes N (default 200)
#      scopes of real documents (knowledge_root.py), built by
#      `pipelines/reindex -j 2` and by `kts-spark ROOT` on local[2]: Spark's
#      overhead (target: at most 1.3x).
#
# Times: wall (the whole command, Spark's start included), job (what the
# command reports for its own work, Spark's start left out) and, for --split,
# stages (convert, chunk and embed on the executors).
#
# Every run starts from a fresh copy (no .kts/, no vector cache), with
# embeddings and graphs. Prints a Markdown table and the machine's load.
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), BIN (default
#      <repo>/target/release), TMPDIR (the copies go there).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=${KTS_SHARED_DIR:-$repo/../shared}
bin=${BIN:-$repo/target/release}
files=0 scopes=200
while (($#)); do
    case $1 in
        --files) files=${2:?--files needs a number}; shift ;;
        --scopes) scopes=${2:?--scopes needs a number}; shift ;;
        -h | --help) sed -n '2,22s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) echo "spark-bench: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

python=$repo/pipelines/spark/.venv/bin/python
corpus=$shared/corpora/rust-rfcs/text
[[ -x $python ]] || { echo "spark-bench: no PySpark: run make spark" >&2; exit 2; }
[[ -x $bin/kts-embed ]] || { echo "spark-bench: no kts binaries in $bin (make build)" >&2; exit 2; }
[[ -d $corpus ]] || { echo "spark-bench: $corpus is missing (set KTS_SHARED_DIR)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kts-spark-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Runs a command, its output kept in $work/run.out; prints its wall time in
# seconds. Exit 1 (documents that could not be indexed) is not a failure.
timed() {
    local t=$EPOCHREALTIME status=0
    "$@" > "$work/run.out" 2>&1 || status=$?
    if ((status > 1)); then
        echo "spark-bench: $* failed (exit $status):" >&2
        tail -n 20 "$work/run.out" >&2
        exit 1
    fi
    awk -v a="$t" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

spark() {
    "$python" "$repo/pipelines/spark/kts-spark" --bin "$bin" "$@"
}

# 1. One scope split across E executors.
mkdir -p "$work/rfcs"
find "$corpus" -maxdepth 1 -type f -name '*.md' | LC_ALL=C sort \
    | if ((files > 0)); then head -n "$files"; else cat; fi \
    | xargs -d '\n' cp -t "$work/rfcs"
documents=$(find "$work/rfcs" -type f | wc -l)
megabytes=$(du -sm "$work/rfcs" | cut -f1)
declare -A split_wall split_job split_stages
for executors in 1 2; do
    echo "== split: $documents RFCs, local[$executors], --split $executors" >&2
    rm -rf "$work/scope" && cp -r "$work/rfcs" "$work/scope"
    split_wall[$executors]=$(timed spark "$work/scope" --master "local[$executors]" --split "$executors" \
        --work "$work/chunks")
    split_job[$executors]=$(sed -n 's/^kts-spark .* partitions, \([0-9.]*\) s .*/\1/p' "$work/run.out")
    split_stages[$executors]=$(sed -n 's/.*(stages \([0-9.]*\) s).*/\1/p' "$work/run.out")
    sed -n 's/^kts-spark [^:]*: /  /p' "$work/run.out" >&2
done
chunks=$(cat "$work/chunks/chunks"/part-* | grep -c '"schema":"kts.chunk/1"')

# 2. A knowledge root: pipelines/reindex against kts-spark.
echo "== whole root: $scopes scopes" >&2
python3 "$here/knowledge_root.py" "$work/root" --scopes "$scopes" > /dev/null
cp -r "$work/root" "$work/root-spark"
root_documents=$(find "$work/root" -mindepth 2 -type f -not -path '*/.*' | wc -l)
reindex_wall=$(timed "$repo/pipelines/reindex" "$work/root" -j 2 --bin "$bin")
reindex_job=$(sed -n 's/^reindex .* scopes in \([0-9.]*\) s: .*/\1/p' "$work/run.out")
sed -n 's/^reindex [^:]*: /  reindex: /p' "$work/run.out" >&2
spark_wall=$(timed spark "$work/root-spark" --master 'local[2]')
spark_job=$(sed -n 's/^kts-spark .* scopes in \([0-9.]*\) s: .*/\1/p' "$work/run.out")
sed -n 's/^kts-spark [^:]*: /  kts-spark: /p' "$work/run.out" >&2
root_chunks=$(find "$work/root" -path '*/.kts/cache/embed.jsonl' -exec cat {} + \
    | grep -c '"schema":"kts.chunk/1"')

echo
echo "| run | input | wall s | job s | stages s | ratio (wall) |"
echo "|---|---|---:|---:|---:|---|"
for executors in 1 2; do
    echo "| --split $executors, local[$executors] | $documents RFCs, $megabytes MB, $chunks chunks |" \
        "${split_wall[$executors]} | ${split_job[$executors]} | ${split_stages[$executors]} |" \
        "$([[ $executors == 2 ]] && awk -v a="${split_wall[1]}" -v b="${split_wall[2]}" \
            'BEGIN { printf "%.2fx faster than 1 executor", a / b }') |"
done
echo "| pipelines/reindex -j 2 | $scopes scopes, $root_documents documents, $root_chunks chunks |" \
    "$reindex_wall | $reindex_job | | |"
echo "| kts-spark ROOT, local[2] | the same | $spark_wall | $spark_job | |" \
    "$(awk -v a="$spark_wall" -v b="$reindex_wall" 'BEGIN { printf "%.2fx pipelines/reindex (target <= 1.3x)", a / b }') |"
echo "($(nproc) cores, $(uptime | sed 's/.*load/load/'))"
