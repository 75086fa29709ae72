# Timing helpers shared by the benchmarks (sourced, not run).

# Runs a command, its output thrown away, and prints its wall time in
# microseconds.
microseconds() {
    local t0
    t0=$(date +%s%N)
    "$@" >/dev/null
    echo $((($(date +%s%N) - t0) / 1000))
}

# Reads one time in microseconds per line; prints "LABEL: p50 X ms, p95 Y ms
# over N runs".
percentiles() {
    sort -n | awk -v label="$1" '{ a[NR] = $1 } END {
        printf "%s: p50 %.1f ms, p95 %.1f ms over %d runs\n",
            label, a[int(NR * 0.5) + 1] / 1000, a[int(NR * 0.95) + 1] / 1000, NR }'
}

# The "text" of the first N records of a queries JSONL file, one per line.
query_texts() {
    head -n "$2" "$1" | python3 -c 'import json, sys
for line in sys.stdin: print(json.loads(line)["text"])'
}
