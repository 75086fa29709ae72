#!/usr/bin/env bash
# Runs the whole pipeline on a scope, shows what came out, and asks it a question.
# Usage: pipelines/demo.sh BIN_DIR SCOPE
set -euo pipefail
bin=${1:?usage: demo.sh BIN_DIR SCOPE}
scope=${2:?usage: demo.sh BIN_DIR SCOPE}
mkdir -p "$scope/.kts"
out="$scope/.kts/chunks.jsonl"

echo "\$ kts-crawl $scope | kts-convert | kts-chunk | tee $out | kts-embed | kts-index $scope" >&2
"$bin/kts-crawl" "$scope" --stats | "$bin/kts-convert" --stats | "$bin/kts-chunk" --stats \
    | tee "$out.tmp" | "$bin/kts-embed" --stats | "$bin/kts-index" "$scope"
mv "$out.tmp" "$out"

python3 - "$out" <<'PY' >&2
import json, sys

records = [json.loads(line) for line in open(sys.argv[1])]
docs = [r for r in records if r["schema"] == "kts.doc/1"]
chunks = [r for r in records if r["schema"] == "kts.chunk/1"]

print("\nDocuments (doc_type, title, path):")
for d in docs:
    print(f"  {d['doc_type']:<13} {d['title'][:45]:<46} {d['path']}")

print("\nFirst chunk of each document (heading path, page or slide, text):")
seen = set()
for c in chunks:
    if c["doc_id"] in seen:
        continue
    seen.add(c["doc_id"])
    where = f" (page {c['page']})" if "page" in c else f" (slide {c['slide']})" if "slide" in c else ""
    text = " ".join(c["text"].split())[:90]
    print(f"  {c['path']} > {' > '.join(c['heading_path'])}{where}\n      {text}")

print(f"\n{len(docs)} documents, {len(chunks)} chunks: {sys.argv[1]}")
PY

echo >&2
echo "\$ kts-graph $scope --stats && kts-graph $scope central --top 5" >&2
"$bin/kts-graph" "$scope" --stats
"$bin/kts-graph" "$scope" central --top 5 >&2

question="what does the corrupt error code mean and how do I fix it?"
echo >&2
echo "\$ kts-query $scope \"$question\" --top-k 3 --format text" >&2
"$bin/kts-query" "$scope" "$question" --top-k 3 --format text
