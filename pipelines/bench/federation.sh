#!/usr/bin/env bash
# Federation benchmark: a scoped query against the same query over one store
# holding everything, and a question fanning out over 60 scopes.
#
#   pipelines/bench/federation.sh [ALL_CHUNKS] [SCOPE_CHUNKS] [FAN_OUT]
#       defaults: 300000 (10,000 scopes' worth), 30 (3 documents of 10 chunks), 60
#
# Builds, with the query benchmark's `bench build` (real corpus text, random
# unit vectors labelled with the default model's id, written through
# kts-store): one store of ALL_CHUNKS chunks, and a knowledge root of FAN_OUT
# scopes of SCOPE_CHUNKS chunks each. Then measures:
#   - in-process hybrid search (the query's vector given), p50/p95: on one
#     scope, and on the store holding everything; their ratio;
#   - `kts-query ROOT "question" --mode bm25`: one process per question (50),
#     fanning out over the FAN_OUT scopes (warm page cache: a first pass is
#     not timed);
#   - the same with hybrid retrieval, where the process also loads the model
#     and embeds the question once (needs models/fetch);
#   - both again in one process, as `kts-query ROOT --batch` asks them: warm,
#     the model loaded once (200 questions).
# Prints p50/p95 per figure, with `uptime` (the machine is shared).
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR, KTS_BENCH_DIR
# (work folder, default a temporary one, removed at the end).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
all_chunks=${1:-300000}
scope_chunks=${2:-30}
fan_out=${3:-60}
corpus=$shared/corpora
[[ -d $corpus ]] || { echo "federation-bench: $corpus is missing (set KTS_SHARED_DIR)" >&2; exit 2; }

work=${KTS_BENCH_DIR:-}
if [[ -z $work ]]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi

echo "== cargo build --release (kts-query, bench example)" >&2
(cd "$root" && cargo build --release --quiet -p kts-query --bins --example bench)
bin=$target/release
bench=$bin/examples/bench
source "$root/pipelines/bench/timing.sh"

uptime
echo "== one store of $all_chunks chunks" >&2
"$bench" build "$all_chunks" "$corpus" "$work/all"

echo "== a knowledge root of $fan_out scopes of $scope_chunks chunks" >&2
mkdir -p "$work/root"
for i in $(seq 1 "$fan_out"); do
    name=$(printf 'bear_stearns_%d_he%d' $((2000 + i % 8)) "$i")
    "$bench" build "$scope_chunks" "$corpus" "$work/tmp" >/dev/null
    mv "$work/tmp/scope" "$work/root/$name"
    rm -rf "$work/tmp"
done
first=$(find "$work/root" -mindepth 1 -maxdepth 1 | sort | head -n 1)

echo "== scoped against everything (in-process hybrid, vector given)" >&2
scoped=$("$bench" query "$first" "$work/all/queries.jsonl" | tee /dev/stderr)
everything=$("$bench" query "$work/all/scope" "$work/all/queries.jsonl" | tee /dev/stderr)
p50() { sed -E 's/.*p50 ([0-9.]+) ms.*/\1/'; }
awk -v a="$(p50 <<<"$everything")" -v s="$(p50 <<<"$scoped")" \
    'BEGIN { printf "scoped p50 %.2f ms, everything p50 %.2f ms: %.1fx faster\n", s, a, a / s }'

# p50/p95 of one process per question.
fan() {
    local label=$1
    shift
    query_texts "$work/all/queries.jsonl" 50 | while IFS= read -r question; do
        microseconds "$bin/kts-query" "$work/root" "$question" --quiet "$@"
    done | percentiles "$label"
}

echo "== fan-out over $fan_out scopes (one process per question)" >&2
fan "warm-up" --mode bm25 >/dev/null
fan "fan-out over $fan_out scopes, bm25" --mode bm25
fan "fan-out over $fan_out scopes, hybrid (model loaded, question embedded once)"

echo "== fan-out over $fan_out scopes, warm (one process, as --batch)" >&2
"$bench" fanout "$work/root" "$work/all/queries.jsonl" --mode bm25
"$bench" fanout "$work/root" "$work/all/queries.jsonl"
uptime
