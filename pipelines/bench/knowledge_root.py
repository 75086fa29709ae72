#!/usr/bin/env python3
"""Writes a test knowledge root: many scope folders of real documents.

    pipelines/bench/knowledge_root.py ROOT [--scopes 10000] [--docs-per-scope 5-10] [--seed 1]

Each immediate sub-folder of ROOT is a scope named like a deal or a team:
most are securitisation deals from a few issuers x years x series, scopes in
several styles ("bear_stearns_2006_HE1", "Bear Stearns 2006-HE1",
"BSABS 2006-HE1", "bear-stearns-2006-he1"); the rest are teams ("Customer
Support - EMEA", "R&D Tools (Berlin)") and projects ("PRJ-0421 Data
Migration"). Slugs (lowercase; spaces, hyphens and underscores to one "_";
other characters dropped) are unique.

Every scope holds --docs-per-scope documents taken from the real corpora in
<shared>/corpora (tldr-pages command pages and Rust RFCs, drawn in a seeded
order, so each is reused about equally often across scopes). Neighbouring
scopes of one family (an issuer's deals of one year, a department's teams)
also share near-identical template documents -- a remittance report, a summary
of terms, an onboarding checklist, a postmortem -- in which only the names,
dates and figures change: text that a search must not confuse across scopes.

ROOT/.truth.jsonl has one line per scope: its folder, slug, kind, family, the
words of its name, a few distinctive words of its documents (those found in
the fewest scopes, with that number), and its documents. The output depends
only on the arguments and the corpora.
"""

import argparse
import json
import os
import random
import re
import sys
from collections import Counter
from pathlib import Path

ISSUERS = [
    ("Bear Stearns", "BSABS"), ("Countrywide", "CWABS"), ("Morgan Stanley", "MSAC"),
    ("Goldman Sachs", "GSAMP"), ("Lehman Brothers", "SASCO"), ("Washington Mutual", "WAMU"),
    ("Merrill Lynch", "MLMI"), ("Credit Suisse", "CSFB"), ("JP Morgan", "JPMAC"),
    ("Citigroup", "CMLTI"), ("Ameriquest", "AMQ"), ("New Century", "NCHET"),
    ("Option One", "OOMLT"), ("Residential Asset", "RASC"), ("Deutsche Bank", "DBALT"),
    ("Fremont", "FHLT"), ("Long Beach", "LBMLT"), ("Argent", "ARSI"),
    ("Wells Fargo", "WFMBS"), ("Nomura", "NAAC"), ("IndyMac", "INDX"),
    ("First Franklin", "FFML"), ("Saxon", "SAST"), ("Soundview", "SVHE"),
    ("Carrington", "CARR"), ("Park Place", "PPSI"),
]
YEARS = list(range(1999, 2009))
SERIES = (
    [f"HE{i}" for i in range(1, 13)] + [f"AR{i}" for i in range(1, 7)]
    + [f"FF{i}" for i in range(1, 5)] + [f"NC{i}" for i in range(1, 5)]
    + [f"OPT{i}" for i in range(1, 5)] + [f"A{i}" for i in range(1, 9)]
    + [str(i) for i in range(1, 9)]
)
TRUSTEES = ["Deutsche Bank National Trust", "U.S. Bank National Association",
            "Wells Fargo Bank", "LaSalle Bank", "The Bank of New York Mellon",
            "Citibank N.A.", "HSBC Bank USA"]
SERVICERS = ["Ocwen Loan Servicing", "Select Portfolio Servicing", "Litton Loan Servicing",
             "Wells Fargo Home Mortgage", "Saxon Mortgage Services", "Countrywide Home Loans"]
DEPARTMENTS = ["Customer Support", "Platform Infrastructure", "HR Policies", "Finance Operations",
               "Legal and Compliance", "Data Engineering", "Security Response", "R&D Tools",
               "Sales Enablement", "Facilities", "Treasury", "Credit Risk", "Investor Relations",
               "Mobile Apps", "Payments", "Quality Assurance"]
REGIONS = ["EMEA", "APAC", "Americas", "Berlin", "London", "New York", "Singapore", "Toronto",
           "Sao Paulo", "Nordics", "Iberia", "India", "Japan", "Australia", "Benelux", "Dublin"]
PROJECT_WORDS = (["Data", "Ledger", "Billing", "Identity", "Search", "Archive", "Vendor", "Cloud",
                  "Reporting", "Onboarding", "Pricing", "Warehouse"],
                 ["Migration", "Cleanup", "Rollout", "Review", "Consolidation", "Upgrade",
                  "Audit", "Redesign", "Pilot", "Decommissioning"])
PEOPLE = ["Ana Ruiz", "Tom Becker", "Priya Natarajan", "Kenji Sato", "Lena Novak", "Omar Haddad",
          "Grace Liu", "Marco Bianchi", "Sofia Lindqvist", "David Okafor", "Chloe Martin",
          "Ravi Iyer"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
STOPWORDS = set("""about above after again against because before being below between
both cannot could doing during each further having here itself myself other ourselves
should their theirs them themselves then there these they this those through under until
very what when where which while whom would your yours yourself which within without
example examples using based""".split())


def slug(name):
    """The scope slug of a folder name, as kts computes it (kts-store's scope_slug)."""
    out = ""
    for c in name:
        if c in " -_":
            if out and not out.endswith("_"):
                out += "_"
        elif c.isalnum():
            out += c.lower()
    return out.rstrip("_")


def words(text):
    """Whole words of 6 to 20 letters (not the fragments of tldr's "[h]ighlight")."""
    return set(re.findall(r"(?<![\w\[\]])[a-z]{6,20}(?![\w\[\]])", text.lower())) - STOPWORDS


def name_words(name):
    return [w.lower() for w in re.findall(r"[A-Za-z0-9]+", name)]


# ---------------------------------------------------------------- scope names

def deal_folder(rng, issuer, year, series):
    full, shelf = issuer
    style = rng.random()
    if style < 0.4:
        return f"{full.lower().replace(' ', '_')}_{year}_{series}"
    if style < 0.65:
        return f"{full} {year}-{series}"
    if style < 0.85:
        return f"{shelf} {year}-{series}"
    return f"{full.lower().replace(' ', '-')}-{year}-{series.lower()}"


def deal_scopes(rng, count):
    """Deals, family by family: a run of 3 to 12 consecutive series of one
    issuer and year. Passes over the issuer-years continue each one's series."""
    issuer_years = [(i, y) for i in ISSUERS for y in YEARS]
    next_series = {key: 0 for key in range(len(issuer_years))}
    scopes = []
    for block in range(1, len(SERIES)):
        order = list(next_series)
        rng.shuffle(order)
        for key in order:
            (issuer, year), start = issuer_years[key], next_series[key]
            take = SERIES[start:start + rng.randint(3, 12)]
            next_series[key] += len(take)
            family = f"{slug(issuer[0])}_{year}" + (f"_{block}" if block > 1 else "")
            for series in take:
                if len(scopes) == count:
                    return scopes
                scopes.append({
                    "folder": deal_folder(rng, issuer, year, series), "kind": "deal",
                    "family": family, "issuer": issuer[0], "shelf": issuer[1], "year": year,
                    "series": series,
                })
    sys.exit(f"knowledge_root: only {len(scopes)} deal names are available")


def team_scopes(rng, count, taken):
    scopes = []
    while len(scopes) < count:
        if rng.random() < 0.6:
            dept = rng.choice(DEPARTMENTS)
            region = rng.choice(REGIONS)
            style = rng.choice(["{d} - {r}", "{d} ({r})", "{dl}-{rl}", "{d} {r} team"])
            folder = style.format(d=dept, r=region, dl=slug(dept).replace("_", "-"),
                                  rl=slug(region).replace("_", "-"))
            scope = {"folder": folder, "kind": "team", "family": slug(dept),
                     "department": dept, "region": region}
        else:
            number = rng.randrange(100, 10000)
            first, second = (rng.choice(w) for w in PROJECT_WORDS)
            folder = rng.choice(["PRJ-{n:04d} {a} {b}", "prj_{n:04d}_{al}_{bl}",
                                 "{y}-Q{q} {a} {b}"]).format(
                n=number, a=first, b=second, al=first.lower(), bl=second.lower(),
                y=rng.choice(YEARS[-3:]) + 16, q=rng.randint(1, 4))
            scope = {"folder": folder, "kind": "project", "family": f"{first} {second}".lower(),
                     "project": f"{first} {second}"}
        if slug(scope["folder"]) in taken:
            continue
        taken.add(slug(scope["folder"]))
        scopes.append(scope)
    return scopes


# ------------------------------------------------------------------ templates

def money(rng, low, high):
    return f"${rng.uniform(low, high):,.2f}"


def remittance_report(rng, s, family_rng):
    """A monthly report: the family's boilerplate, this deal's names and figures."""
    month = family_rng.randrange(12)
    deal = f"{s['shelf']} {s['year']}-{s['series']}"
    trustee = TRUSTEES[family_rng.randrange(len(TRUSTEES))]
    servicer = SERVICERS[family_rng.randrange(len(SERVICERS))]
    day = 25
    rows = "\n".join(
        f"| {bucket} | {rng.randint(3, 400)} | {money(rng, 1e5, 9e6)} |"
        for bucket in ["30-59 days", "60-89 days", "90+ days", "Foreclosure", "REO"])
    name = f"reports/remittance-report-{s['year']}-{month + 1:02d}.md"
    text = f"""# {deal} Monthly Remittance Report

Distribution Date: {MONTHS[month]} {day}, {s['year']}
Trustee: {trustee}
Servicer: {servicer}

## Summary

This report is furnished by {trustee}, as trustee for the {s['issuer']} Mortgage
Loan Trust {s['year']}-{s['series']}, Asset-Backed Certificates, Series {s['year']}-{s['series']}
(the "Trust"), to the holders of the certificates. The "Distribution Date" means the
{day}th day of each month or, if that day is not a business day, the next business day.
Capitalised terms have the meanings given in the Pooling and Servicing Agreement.

Beginning pool balance: {money(rng, 2e8, 9e8)}
Ending pool balance: {money(rng, 1e8, 8e8)}
Scheduled principal: {money(rng, 1e5, 9e5)}
Prepayments in full: {money(rng, 1e6, 9e6)}
Realized losses: {money(rng, 0, 2e6)}

## Delinquencies

| Status | Loans | Balance |
|---|---|---|
{rows}

## DSCR loans

The pool includes {rng.randint(0, 40)} investor loans underscopes on a debt service
coverage ratio (DSCR) basis; their weighted average DSCR is {rng.uniform(1.0, 1.6):.2f}.

## Triggers

A Trigger Event is in effect if the rolling three-month delinquency percentage exceeds
{family_rng.uniform(30, 45):.2f}% of the senior enhancement percentage, or cumulative
realized losses exceed the required loss percentage. Trigger Event in effect: {rng.choice(["No", "Yes"])}.

Questions about this report: contact the {servicer} investor desk, quoting {deal}.
"""
    return name, text


def summary_of_terms(rng, s, family_rng):
    deal = f"{s['issuer']} Mortgage Loan Trust {s['year']}-{s['series']}"
    trustee = TRUSTEES[family_rng.randrange(len(TRUSTEES))]
    servicer = SERVICERS[family_rng.randrange(len(SERVICERS))]
    month = family_rng.randrange(12)
    name = "legal/summary-of-terms.md"
    text = f"""# Summary of Terms: {deal}

Closing Date: {MONTHS[month]} {family_rng.randint(1, 28)}, {s['year']}
Cut-off Date: {MONTHS[month]} 1, {s['year']}

## Parties

- Depositor: {s['issuer']} Asset Backed Securities Corp.
- Sponsor: {s['issuer']} Mortgage Capital
- Servicer: {servicer} (the "Servicer")
- Trustee: {trustee} (the "Trustee")

## Definitions

"Overcollateralization Target Amount" means {family_rng.uniform(1.5, 4.0):.2f}% of the
Cut-off Date pool balance until the Stepdown Date. "Stepdown Date" means the later of
the Distribution Date in {MONTHS[month]} {s['year'] + 3} and the first Distribution Date on
which the senior enhancement percentage is at least twice its initial value.
"Servicing Fee Rate" means 0.50% per annum.

## Events of Default

The Servicer fails to remit any payment within two business days; the Servicer fails
to observe a covenant for sixty days after notice; or the Servicer becomes insolvent.
Upon an Event of Default the Trustee may terminate the Servicer and appoint a successor.

## Optional Termination

The Servicer may purchase all loans once the pool balance falls below 10% of the
Cut-off Date pool balance ({money(rng, 3e8, 1.2e9)} for {s['series']}).
"""
    return name, text


def onboarding_checklist(rng, s, family_rng):
    team = s["folder"]
    lead = PEOPLE[rng.randrange(len(PEOPLE))]
    name = "onboarding/checklist.md"
    text = f"""# Onboarding checklist: {team}

Owner: {lead}. Last reviewed: {MONTHS[rng.randrange(12)]} {rng.choice(YEARS) + 16}.

## First day

- Collect your laptop from IT and enrol it in device management.
- Join the {team} channel and the on-call rota calendar.
- Read the team handbook and sign the acceptable use policy.

## First week

- Pair with {lead} on one ticket end to end.
- Request access to the systems listed in the access matrix; approvals take two days.
- Book the security awareness training (mandatory within {family_rng.choice([7, 14, 30])} days).

## Escalation

If an access request is refused with ACCESS-{family_rng.randint(100, 999)}, ask {lead}
to approve it in the access portal.
"""
    return name, text


def postmortem(rng, s, family_rng):
    code = f"ERR-{family_rng.choice(['AUTH', 'PAY', 'SYNC', 'DB'])}-{family_rng.randint(100, 599)}"
    when = f"{MONTHS[rng.randrange(12)]} {rng.randint(1, 28)}, {rng.choice(YEARS) + 16}"
    name = f"incidents/postmortem-{code.lower()}.md"
    text = f"""# Postmortem: {code} outage ({s['folder']})

Date: {when}. Duration: {rng.randint(12, 240)} minutes. Severity: SEV{rng.randint(1, 3)}.

## What happened

Requests failed with {code} after a configuration change reached production. The
change had passed review but the canary stage was skipped.

## Root cause

The connection pool limit was lowered from {family_rng.choice([200, 400])} to
{family_rng.choice([20, 40])}; under load, requests waited past the timeout and were
rejected with {code}.

## Actions

1. Restore the canary stage for configuration changes (owner: {PEOPLE[rng.randrange(len(PEOPLE))]}).
2. Alert when the pool wait time exceeds 500 ms.
3. Document {code} in the troubleshooting guide.
"""
    return name, text


TEMPLATES = {
    "deal": [remittance_report, summary_of_terms],
    "team": [onboarding_checklist, postmortem],
    "project": [postmortem, onboarding_checklist],
}


# -------------------------------------------------------------------- corpora

class Pool:
    """Corpus documents drawn in a seeded order, cycling when exhausted."""

    def __init__(self, rng, files):
        self.rng, self.files, self.order, self.uses = rng, files, [], Counter()

    def draw(self, avoid):
        for _ in range(len(self.files)):
            if not self.order:
                self.order = list(self.files)
                self.rng.shuffle(self.order)
            path = self.order.pop()
            if path not in avoid:
                self.uses[path] += 1
                return path
        raise RuntimeError("corpus too small")


def corpus_name(corpora, path):
    rel = path.relative_to(corpora)
    if rel.parts[0] == "tldr-pages-en":
        return f"commands/{rel.parts[-2]}-{rel.stem}.md"
    return f"design/rfc-{rel.stem}.md"


def parse_range(text):
    m = re.fullmatch(r"(\d+)(?:-(\d+))?", text)
    if not m:
        raise argparse.ArgumentTypeError("N or MIN-MAX")
    low = int(m.group(1))
    high = int(m.group(2) or low)
    if not 1 <= low <= high:
        raise argparse.ArgumentTypeError("need 1 <= MIN <= MAX")
    return low, high


def default_corpora():
    shared = os.environ.get("KTS_SHARED_DIR") or Path(__file__).resolve().parents[3] / "shared"
    return Path(shared) / "corpora"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 2)[2])
    parser.add_argument("root", type=Path, help="the knowledge root to write (new or empty)")
    parser.add_argument("--scopes", type=int, default=10000, help="scope folders (default 10000)")
    parser.add_argument("--docs-per-scope", type=parse_range, default=(5, 10), metavar="N|MIN-MAX",
                        help="corpus documents per scope (default 5-10)")
    parser.add_argument("--rfc-share", type=float, default=0.15,
                        help="share of corpus documents that are (long) Rust RFCs (default 0.15)")
    parser.add_argument("--template-share", type=float, default=0.7,
                        help="share of families whose scopes share template documents (default 0.7)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpora", type=Path, default=default_corpora(),
                        help="default: $KTS_SHARED_DIR/corpora or <repo>/../shared/corpora")
    args = parser.parse_args()

    corpora = args.corpora.resolve()
    tldr = sorted((corpora / "tldr-pages-en" / "pages").glob("*/*.md"))
    rfcs = sorted((corpora / "rust-rfcs" / "text").glob("*.md"))
    if not tldr or not rfcs:
        sys.exit(f"knowledge_root: no corpora in {corpora} (set KTS_SHARED_DIR or --corpora)")
    if args.root.exists() and any(args.root.iterdir()):
        sys.exit(f"knowledge_root: {args.root} is not empty")

    rng = random.Random(args.seed)
    deals = round(args.scopes * 0.8)
    scopes = deal_scopes(rng, deals)
    taken = {slug(s["folder"]) for s in scopes}
    if len(taken) != len(scopes):
        sys.exit("knowledge_root: deal slugs collide")
    scopes += team_scopes(rng, args.scopes - deals, taken)
    for s in scopes:
        s["slug"] = slug(s["folder"])

    families = {s["family"] for s in scopes}
    templated = {f for f in sorted(families) if rng.random() < args.template_share}
    tldr_pool, rfc_pool = Pool(rng, tldr), Pool(rng, rfcs)

    args.root.mkdir(parents=True, exist_ok=True)
    doc_words, total_bytes = {}, 0
    for s in scopes:
        folder = args.root / s["folder"]
        folder.mkdir()
        docs, drawn = [], set()
        for _ in range(rng.randint(*args.docs_per_scope)):
            pool = rfc_pool if rng.random() < args.rfc_share else tldr_pool
            source = pool.draw(drawn)
            drawn.add(source)
            name = corpus_name(corpora, source)
            text = source.read_text(encoding="utf-8")
            if source not in doc_words:
                doc_words[source] = words(text)
            docs.append((name, text, source))
        templates = []
        if s["family"] in templated:
            family_seed = f"{args.seed}/{s['family']}"
            for make in TEMPLATES[s["kind"]][: rng.randint(1, 2)]:
                name, text = make(rng, s, random.Random(family_seed + make.__name__))
                docs.append((name, text, None))
                templates.append(name)
        for name, text, _ in docs:
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            total_bytes += len(text.encode())
        s["documents"] = sorted(name for name, _, _ in docs)
        s["templates"] = templates
        # Words of the templates are this scope's own; corpus words are shared.
        s["_sources"] = [src for _, _, src in docs if src is not None]
        s["_own"] = set().union(*(words(t) for _, t, src in docs if src is None)) if templates else set()

    # How many scopes hold each word (a corpus document counts once per use).
    scopes_with = Counter()
    for source, count in list(tldr_pool.uses.items()) + list(rfc_pool.uses.items()):
        for w in doc_words[source]:
            scopes_with[w] += count
    for s in scopes:
        scopes_with.update(s["_own"])

    with open(args.root / ".truth.jsonl", "w", encoding="utf-8") as truth:
        for s in scopes:
            names = set(name_words(s["folder"]))
            candidates = set(s["_own"]).union(*(doc_words[src] for src in s["_sources"])) - names
            best = sorted(candidates, key=lambda w: (scopes_with[w], w))[:5]
            record = {k: v for k, v in s.items() if not k.startswith("_")}
            record["name_words"] = name_words(s["folder"])
            record["words"] = best
            record["word_scopes"] = [scopes_with[w] for w in best]
            truth.write(json.dumps(record, ensure_ascii=False) + "\n")

    docs = sum(len(s["documents"]) for s in scopes)
    print(f"knowledge_root: {len(scopes)} scopes, {docs} documents, "
          f"{total_bytes / 1e6:.1f} MB in {args.root} ({len(templated)} of {len(families)} "
          f"families share templates); truth in {args.root / '.truth.jsonl'}", file=sys.stderr)


if __name__ == "__main__":
    main()
