#!/usr/bin/env bash
# MCP benchmark: warm `search` over kts-mcp against a cold kts-query process.
#
#   pipelines/bench/mcp.sh [N...]     # default: 10000 100000
#
# For each N, builds a scope of N chunks of real text (paragraphs of
# shared/corpora, as pipelines/bench/query.sh does, random unit vectors) and
# serves it with `kts-mcp --http` on loopback. Then, with the official Python
# MCP SDK as the client (tools/kts-mcp/tests/python/setup):
#   - warm: one client, 200 `search` calls one after the other, hybrid, the
#     question embedded by the real model in the server: p50/p95 per call,
#     through the SDK and as plain JSON-RPC POSTs (the SDK's own work
#     excluded); and where a call's time goes: the question's embedding and
#     the search in one process (examples/bench `embed-question`, `query`);
#   - throughput: 16 clients x 50 searches at once: queries/s, p50/p95;
#   - the server's peak resident memory (VmHWM);
#   - cold: one `kts-query DIR "question"` process per question (20
#     questions), embedding it with the model: p50/p95, and the ratio.
# Prints the figures with `uptime` (the machine is shared).
#
# Env: KTS_SHARED_DIR (default <repo>/../shared), CARGO_TARGET_DIR, KTS_BENCH_DIR.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
shared=${KTS_SHARED_DIR:-$root/../shared}
target=${CARGO_TARGET_DIR:-$root/target}
if (($# > 0)); then sizes=("$@"); else sizes=(10000 100000); fi
corpus=$shared/corpora
[[ -d $corpus ]] || { echo "mcp-bench: $corpus is missing (set KTS_SHARED_DIR)" >&2; exit 2; }
[[ -f $root/models/cache/all-minilm-l6-v2-q8/model.onnx ]] || {
    echo "mcp-bench: the model is missing: run models/fetch first" >&2; exit 2; }
"$root/tools/kts-mcp/tests/python/setup"
python=$root/tools/kts-mcp/tests/python/.venv/bin/python
client=$root/tools/kts-mcp/tests/python/client.py

work=${KTS_BENCH_DIR:-}
if [[ -z $work ]]; then
    work=$(mktemp -d)
fi
server=
cleanup() {
    [[ -n $server ]] && kill "$server" 2>/dev/null || true
    [[ -z ${KTS_BENCH_DIR:-} ]] && rm -rf "$work"
}
trap cleanup EXIT

echo "== cargo build --release (kts-index, kts-query, kts-mcp, bench example)" >&2
(cd "$root" && cargo build --release --quiet -p kts-index -p kts-query -p kts-mcp --bins --example bench)
bin=$target/release
bench=$bin/examples/bench

source "$root/pipelines/bench/timing.sh"

for n in "${sizes[@]}"; do
    dir=$work/n$n
    scope=$dir/scope
    rm -rf "$scope" && mkdir -p "$scope"
    echo
    echo "## $n chunks ($(uptime | sed 's/.*load/load/'))"
    echo "== $n chunks: writing and indexing the stream" >&2
    "$bench" stream "$n" "$corpus" "$dir"
    "$bin/kts-index" "$scope" <"$dir/stream.jsonl" 2>/dev/null
    rm "$dir/stream.jsonl"
    "$python" -c 'import json, sys
for line in open(sys.argv[1]): print(json.loads(line)["text"])' "$dir/queries.jsonl" >"$dir/questions.txt"
    mapfile -t questions < <(grep -v "^[[:space:]]*$" "$dir/questions.txt" | head -n 50)

    "$bin/kts-mcp" "$scope" --http 127.0.0.1:0 --quiet 2>"$dir/server.log" &
    server=$!
    url=
    for _ in $(seq 100); do
        url=$(sed -n 's/^kts-mcp: serving MCP at //p' "$dir/server.log")
        [[ -n $url ]] && break
        sleep 0.1
    done
    [[ -n $url ]] || { cat "$dir/server.log" >&2; exit 1; }
    "$python" "$client" load --http "$url" --clients 1 --searches 200 "${questions[@]}" \
        | "$python" -c 'import json, sys; s = json.load(sys.stdin)
print("warm MCP search, 1 client (Python SDK): p50 %s ms, p95 %s ms over %s calls, %d failed"
      % (s["p50_ms"], s["p95_ms"], s["requests"], len(s["failures"])))' \
        | tee "$dir/warm.txt"
    "$python" "$client" load --http "$url" --clients 1 --searches 200 --raw "${questions[@]}" \
        | "$python" -c 'import json, sys; s = json.load(sys.stdin)
print("warm MCP search, 1 client (plain JSON-RPC over HTTP): p50 %s ms, p95 %s ms over %s calls, %d failed"
      % (s["p50_ms"], s["p95_ms"], s["requests"], len(s["failures"])))'
    printf "%s\n" "${questions[@]}" >"$dir/asked.txt"
    echo "  of which: $("$bench" embed-question 2 "$dir/asked.txt")"
    echo "  and: $("$bench" query "$scope" "$dir/queries.jsonl" | sed 's/in-process :/search in one process, question vector given:/')"
    "$python" "$client" load --http "$url" --clients 16 --searches 50 "${questions[@]}" \
        | "$python" -c 'import json, sys; s = json.load(sys.stdin)
print("16 clients x 50 searches: %s queries/s, p50 %s ms, p95 %s ms, %d failed"
      % (s["queries_per_second"], s["p50_ms"], s["p95_ms"], len(s["failures"])))'
    echo "server peak memory: $(awk '/VmHWM/ { printf "%.0f MiB", $2 / 1024 }' "/proc/$server/status")"
    kill "$server" && wait "$server" || true
    server=

    printf "%s\n" "${questions[@]:0:20}" | while IFS= read -r question; do
        microseconds "$bin/kts-query" "$scope" "$question" 2>/dev/null
    done | percentiles "cold kts-query process, question embedded by the model" | tee "$dir/cold.txt"
    warm=$(sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p' "$dir/warm.txt")
    cold=$(sed -n 's/.*p50 \([0-9.]*\) ms.*/\1/p' "$dir/cold.txt")
    awk -v w="$warm" -v c="$cold" 'BEGIN { printf "warm MCP is %.1fx faster than the cold CLI (p50)\n", c / w }'
    rm -rf "$dir"
done
