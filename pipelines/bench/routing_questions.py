#!/usr/bin/env python3
"""Writes questions that name a scope of a generated knowledge root.

    pipelines/bench/routing_questions.py ROOT [--count 1000] [--seed 1]

Reads ROOT/.truth.jsonl (written by knowledge_root.py) and writes
ROOT/.questions.jsonl, one question per line:

    {"id": "q17", "scope": "bear_stearns_2006_he1", "naming": "reordered",
     "text": "HE1 Bear Stearns 2006: what does the remittance report say about delinquencies?"}

Each question asks about one of the scope's own documents and names the scope
in one of these ways ("naming"):

  folder     the folder name as written ("Customer Support (EMEA)", "bsabs-2006-he1")
  reordered  the name's words in another order and case ("EMEA customer support")
  partial    a project by its number alone ("project 0421"), no other name word
  alias      a deal by its other name: the issuer for a shelf name and the
             other way round ("BSABS 2006-HE1" for "Bear Stearns 2006-HE1"),
             only for deals whose documents say both

The first three name the scope by its own words; an alias names it only
through what its documents say. The output depends only on the truth file
and the arguments.
"""

import argparse
import json
import random
import re
import sys
from pathlib import Path

TOPICS = {
    "reports/remittance-report": ["the delinquencies", "the realized losses", "the trigger event",
                                  "the DSCR loans", "the ending pool balance"],
    "legal/summary-of-terms": ["the optional termination", "the servicing fee rate",
                               "the events of default", "the stepdown date"],
    "onboarding/checklist": ["the onboarding checklist", "the security awareness training",
                             "an access request"],
    "incidents/postmortem": ["the outage", "the root cause of the incident",
                             "the postmortem actions"],
}
FRAMES = [
    "{name}: what does it say about {topic}?",
    "What do we know about {topic} in {name}?",
    "{topic} for {name}",
    "In {name}, where is {topic} described?",
]


def topic_of(document, rng):
    """A topic a question can ask about, from one of the scope's documents."""
    stem = re.sub(r"\.md$", "", document)
    for prefix, topics in TOPICS.items():
        if stem.startswith(prefix):
            return rng.choice(topics)
    folder, name = stem.split("/", 1)
    if folder == "commands":
        return f"how to use {name.split('-', 1)[-1]}"
    return f"the design of {name.split('-', 2)[-1].replace('-', ' ')}"


def reordered(scope, rng):
    if scope["kind"] == "deal":
        return rng.choice([
            f"{scope['series'].lower()} {scope['year']} {scope['issuer_name']}",
            f"the {scope['year']} {scope['series']} deal of {scope['issuer_name'].upper()}",
        ])
    if scope["kind"] == "team":
        team = " team" if scope["name_words"][-1] == "team" else ""
        return f"{scope['region']} {scope['department'].lower().replace(' and ', ' ')}{team}"
    words = scope["name_words"][:]
    rng.shuffle(words)
    return " ".join(words)


def partial(scope):
    numbers = [w for w in scope["name_words"] if w.isdigit() and len(w) == 4]
    if scope["kind"] != "project" or scope["name_words"][0] != "prj" or not numbers:
        return None
    return f"project {numbers[0]}"


def alias(scope):
    """The deal's other name, when the folder uses one and its documents say the other."""
    if scope["kind"] != "deal" or not scope["templates"]:
        return None
    by_shelf = scope["name_words"][0] == scope["shelf"].lower()
    other = scope["issuer"] if by_shelf else scope["shelf"]
    says_shelf = any(t.startswith("reports/") for t in scope["templates"])
    if not by_shelf and not says_shelf:
        return None
    return f"{other} {scope['year']}-{scope['series']}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 2)[2])
    parser.add_argument("root", type=Path, help="a root written by knowledge_root.py")
    parser.add_argument("--count", type=int, default=1000, help="questions (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    truth_file = args.root / ".truth.jsonl"
    if not truth_file.is_file():
        sys.exit(f"routing_questions: {truth_file} is missing (write the root with knowledge_root.py)")
    scopes = [json.loads(line) for line in truth_file.open(encoding="utf-8")]
    rng = random.Random(args.seed)
    rng.shuffle(scopes)

    questions = []
    for scope in scopes:
        if len(questions) == args.count:
            break
        if scope["kind"] == "deal":
            # The issuer as the folder writes it (full name or shelf).
            scope["issuer_name"] = " ".join(scope["name_words"][:-2])
        namings = {"folder": scope["folder"], "reordered": reordered(scope, rng)}
        if (name := partial(scope)) is not None:
            namings["partial"] = name
        if (name := alias(scope)) is not None:
            namings["alias"] = name
        naming = rng.choice(sorted(namings))
        frame = rng.choice(FRAMES)
        text = frame.format(name=namings[naming], topic=topic_of(rng.choice(scope["documents"]), rng))
        questions.append({"id": f"q{len(questions) + 1}", "scope": scope["slug"],
                          "naming": naming, "text": text[0].upper() + text[1:]})

    out = args.root / ".questions.jsonl"
    with out.open("w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps(q, ensure_ascii=False) + "\n")
    kinds = {}
    for q in questions:
        kinds[q["naming"]] = kinds.get(q["naming"], 0) + 1
    print(f"routing_questions: {len(questions)} questions in {out} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})", file=sys.stderr)


if __name__ == "__main__":
    main()
