#!/usr/bin/env python3
"""How well the best hit's confidence tells a question the scope can answer
from one it cannot: each scope that kts-eval indexed is asked its own set's
questions and the other sets' questions, and the AUROC of the best hit's
confidence (own questions positive) is printed per scope, with the mean best
confidence of both kinds.

    pipelines/eval/no_answer.py --work DIR [--bin DIR] [--mode MODE] [--per-set N] SET...

SET is a BEIR folder with its split, as kts-eval takes it
(`../shared/eval/scifact:train`, `target/devsets/tldr:dev`); DIR is the
--work folder of a kts-eval run over the same sets (a scope per set,
named after the set's folder). The questions are a fixed sample of each
set's judged queries (--per-set, 150).
"""

import argparse
import json
import random
import subprocess
from pathlib import Path


def judged_queries(folder: Path, split: str, count: int) -> list:
    judged = set()
    with open(folder / "qrels" / f"{split}.tsv", encoding="utf-8") as qrels:
        for line in qrels:
            query_id = line.split("\t")[0]
            if query_id != "query-id":
                judged.add(query_id)
    with open(folder / "queries.jsonl", encoding="utf-8") as lines:
        queries = [json.loads(line) for line in lines]
    queries = [q for q in queries if q["_id"] in judged]
    random.Random(7).shuffle(queries)
    return queries[:count]


def best_confidences(kts_query: Path, scope: Path, queries: list, mode: str) -> list:
    batch = "".join(json.dumps({"id": q["_id"], "text": q["text"]}) + "\n" for q in queries)
    run = subprocess.run(
        [str(kts_query), str(scope), "--batch", "--mode", mode, "--top-k", "10"],
        input=batch, capture_output=True, text=True, check=True,
    )
    best = {}
    for line in run.stdout.splitlines():
        hit = json.loads(line)
        if "confidence" in hit:
            best[hit["query_id"]] = max(best.get(hit["query_id"], 0.0), hit["confidence"])
    return [best.get(q["_id"], 0.0) for q in queries]


def auroc(positives: list, negatives: list) -> float:
    pairs = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return pairs / (len(positives) * len(negatives))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="+", metavar="SET")
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--bin", type=Path, default=Path(__file__).resolve().parents[2] / "target" / "release")
    parser.add_argument("--mode", default="hybrid")
    parser.add_argument("--per-set", type=int, default=150)
    args = parser.parse_args()
    sets = {}
    for spec in args.sets:
        folder, _, split = spec.rpartition(":")
        folder = Path(folder)
        sets[folder.name] = judged_queries(folder, split, args.per_set)
    for name, own_queries in sets.items():
        scope = args.work / name
        kts_query = args.bin / "kts-query"
        own = best_confidences(kts_query, scope, own_queries, args.mode)
        foreign = [
            c
            for other, queries in sets.items()
            if other != name
            for c in best_confidences(kts_query, scope, queries, args.mode)
        ]
        print(
            f"{name}: AUROC {auroc(own, foreign):.3f}, mean best confidence "
            f"{sum(own) / len(own):.2f} (own questions) against "
            f"{sum(foreign) / len(foreign):.2f} (other sets')"
        )


if __name__ == "__main__":
    main()
