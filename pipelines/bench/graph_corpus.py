#!/usr/bin/env python3
"""Writes N generated Markdown documents for the graph benchmark.

    graph_corpus.py DIR N

Each document names a few of a shared pool of systems (CamelCase), error
codes, acronyms (spelled out now and then) and defined terms, most often the
first ones of each pool (a Zipf-like spread, as real scopes have a few names
everywhere and many rare ones), in sentences of common words. The same N
gives the same documents.
"""

import os
import random
import sys

WORDS = (
    "request service token cache session login error retry client server "
    "queue worker deploy release config network storage backup restore audit "
    "customer invoice payment report schedule policy access account profile "
    "metric alert incident review update install upgrade migrate cluster node"
).split()
PARTS = (
    "Auth Token Cache Payment Gateway Ledger Audit Queue Report Search Index "
    "Billing Invoice Session Profile Account Metric Alert Backup Storage"
).split()
SUFFIXES = "Service Manager Store Client Broker Proxy Engine Daemon".split()


def pick(rng, pool):
    """An item of the pool, the first ones far more often."""
    return pool[min(int(rng.paretovariate(1.1)) - 1, len(pool) - 1)]


def pools(rng):
    systems = sorted({a + b + c for a in PARTS for b in PARTS if a != b for c in SUFFIXES})
    rng.shuffle(systems)
    codes = [f"ERR-{rng.choice(PARTS).upper()}-{n}" for n in range(100, 700)]
    acronyms = []
    for i in range(300):
        words = rng.sample(PARTS, 3)
        acronyms.append(("".join(w[0] for w in words) + chr(65 + i % 26), " ".join(words)))
    terms = [f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}" for i in range(2000)]
    return systems[:3000], codes, acronyms, terms


def sentence(rng, n=12):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def document(rng, i, systems, codes, acronyms, terms):
    lines = [f"# Note {i}: {rng.choice(WORDS)} {rng.choice(WORDS)}", ""]
    for _ in range(rng.randint(3, 6)):
        a, b = pick(rng, systems), pick(rng, systems)
        code = pick(rng, codes)
        short, long = pick(rng, acronyms)
        parts = [
            sentence(rng),
            f"The {a} uses the {b} for every {rng.choice(WORDS)}.",
            f"When it fails with {code} the {a} retries; {code} is logged.",
            sentence(rng),
        ]
        if rng.random() < 0.3:
            parts.append(f"The {long} ({short}) keeps the {rng.choice(WORDS)}.")
        else:
            parts.append(f"The {short} team reviews {a}.")
        if rng.random() < 0.2:
            term = pick(rng, terms)
            parts.append(f'"{term.title()}" means the {rng.choice(WORDS)} the {b} returns.')
        lines += [" ".join(parts), ""]
    return "\n".join(lines)


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(20240601)
    systems, codes, acronyms, terms = pools(rng)
    for i in range(n):
        folder = os.path.join(out, f"part{i // 1000:03d}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"note{i:06d}.md"), "w") as f:
            f.write(document(rng, i, systems, codes, acronyms, terms))


if __name__ == "__main__":
    main()
