#!/usr/bin/env bash
# Routing benchmark on a generated knowledge root: how often a question that
# names a scope reaches it, how long routing takes, and whether a scoped
# question ever gets a hit from another scope.
#
#   pipelines/bench/routing.sh [ROOT]
#
# ROOT is a root written by knowledge_root.py and indexed (pipelines/reindex);
# without one, SCOPES (default 10000) scopes are generated and indexed
# keyword-only under TMPDIR, then removed. Then:
#   1. kts-catalog rebuilds the root's catalog (time);
#   2. routing_questions.py writes 1,000 questions naming a scope (its folder
#      name, its words reordered, a project's number, a deal's other name);
#   3. `bench route`: each routed as kts-query routes it, in one process:
#      time per question, and per naming how often the named scope comes
#      first (the figure with a > 90% target), is asked at all, and how many
#      scopes are asked;
#   4. one process per question (`kts-query ROOT "question" --mode bm25`, 50
#      questions): scope discovery, catalog, routing and search, p50/p95;
#   5. every question asked of its scope (`/slug question`, one --batch run):
#      the hits from any other scope, or citing a file the scope does not
#      hold, are counted; any makes the benchmark fail.
#
# Env: SCOPES, BIN (default <repo>/target/release), KTS_SHARED_DIR, TMPDIR.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${BIN:-$repo/target/release}
[[ -x $bin/kts-query && -x $bin/examples/bench ]] || {
    echo "routing-bench: no kts binaries in $bin (cargo build --release --bins -p kts-query --example bench)" >&2
    exit 2
}
ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", 1000 * (b - a) }'; }

root=${1:-}
if [[ -z $root ]]; then
    scopes=${SCOPES:-10000}
    work=$(mktemp -d "${TMPDIR:-/tmp}/kts-routing-bench.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    root=$work/root
    echo "== $scopes scopes in $root" >&2
    python3 "$here/knowledge_root.py" "$root" --scopes "$scopes"
    t=$EPOCHREALTIME
    "$repo/pipelines/reindex" "$root" --no-embed --bin "$bin" > "$work/reindex.log" 2>&1 ||
        { tail -n 20 "$work/reindex.log" >&2; exit 1; }
    echo "indexed in $(($(ms_since "$t") / 1000)) s" >&2
fi
[[ -f $root/.truth.jsonl ]] || { echo "routing-bench: $root/.truth.jsonl is missing (knowledge_root.py writes it)" >&2; exit 2; }

echo "== catalog" >&2
t=$EPOCHREALTIME
"$bin/kts-catalog" "$root" --quiet
echo "catalog rebuilt in $(ms_since "$t") ms"

python3 "$here/routing_questions.py" "$root" --count 1000
questions=$root/.questions.jsonl

echo "== routing, in one process" >&2
"$bin/examples/bench" route "$root" "$questions"

echo "== one process per question (bm25)" >&2
head -n 50 "$questions" | while IFS= read -r line; do
    question=$(jq -r .text <<<"$line")
    t=$EPOCHREALTIME
    # A question refused as too broad (exit 2) is timed too.
    "$bin/kts-query" "$root" "$question" --mode bm25 --quiet >/dev/null 2>&1 || (($? == 2))
    ms_since "$t"
    echo
done | sort -n | awk '{ a[NR] = $1 } END {
    printf "kts-query ROOT \"question\": p50 %d ms, p95 %d ms over %d questions\n",
        a[int(NR * 0.5) + 1], a[int(NR * 0.95) + 1], NR }'

echo "== every question asked of its scope (/slug question)" >&2
jq -c '{id, text: ("/" + .scope + " " + .text)}' "$questions" |
    "$bin/kts-query" "$root" --batch --mode bm25 --quiet > "$root/.scoped-hits.jsonl"
python3 - "$root" <<'EOF'
import json, sys
from pathlib import Path

root = Path(sys.argv[1])
folders = {t["slug"]: t["folder"] for t in map(json.loads, open(root / ".truth.jsonl"))}
asked = {q["id"]: q["scope"] for q in map(json.loads, open(root / ".questions.jsonl"))}
hits = [json.loads(line) for line in open(root / ".scoped-hits.jsonl")]
answered = {h["query_id"] for h in hits}
wrong = [h for h in hits
         if h["scope"] != asked[h["query_id"]]
         or not (root / folders[asked[h["query_id"]]] / h["path"]).is_file()]
print(f"scoped questions: {len(hits)} hits for {len(answered)} of {len(asked)} questions, "
      f"{len(wrong)} from another scope or citing a file the scope does not hold")
for h in wrong[:5]:
    print(f"  {h['query_id']}: asked {asked[h['query_id']]}, got {h['scope']} {h['path']}")
sys.exit(1 if wrong else 0)
EOF
echo "($(nproc) cores, $(uptime | sed 's/.*load/load/'))"
