#!/usr/bin/env python3
"""Writes two retrieval development sets, in the BEIR layout kts-eval reads
(corpus.jsonl, queries.jsonl, qrels/dev.tsv), from the scale corpora:

  tldr  known-item questions over the tldr pages: a page's description,
        reworded, asks for the page. Every page is in the corpus.
  rfcs  questions over the Rust RFCs: the RFC's summary, reworded and without
        its feature name, asks for the RFC; and "what does ACRONYM stand
        for" asks for the RFCs that spell the acronym out.

The rewording is deterministic: the name of what is asked for is taken out
(the page's command, the RFC's feature), inline code is dropped, common
words are swapped for synonyms from a fixed table, and the result is put as
a question. So a question shares the page's meaning, not all of its words.
Questions whose source text is not unique in the corpus are left out: they
would have more than one right answer.

    pipelines/eval/devsets.py [--corpora DIR] [--out DIR] [--per-set N]
"""

import argparse
import hashlib
import json
import re
from pathlib import Path

SYNONYMS = {
    "display": "show", "displays": "shows", "show": "display", "shows": "displays",
    "list": "enumerate", "lists": "enumerates", "create": "make", "creates": "makes",
    "delete": "erase", "deletes": "erases", "remove": "erase", "removes": "erases",
    "manage": "administer", "manages": "administers", "run": "execute", "runs": "executes",
    "execute": "run", "executes": "runs", "modify": "change", "modifies": "changes",
    "change": "modify", "changes": "modifies", "print": "output", "prints": "outputs",
    "view": "inspect", "views": "inspects", "search": "look", "find": "locate",
    "finds": "locates", "tool": "utility", "utility": "tool", "program": "application",
    "file": "document", "files": "documents", "directory": "folder",
    "directories": "folders", "convert": "transform", "converts": "transforms",
    "download": "fetch", "downloads": "fetches", "start": "launch", "starts": "launches",
    "stop": "halt", "stops": "halts", "get": "obtain", "gets": "obtains",
    "check": "verify", "checks": "verifies", "compare": "diff", "interactive": "interactively used",
    "command": "instruction", "commands": "instructions", "allow": "permit", "allows": "permits",
    "make": "create", "makes": "creates", "add": "introduce", "adds": "introduces",
    "introduce": "add", "introduces": "adds", "proposes": "suggests", "propose": "suggest",
    "currently": "today", "function": "fn", "functions": "fns", "type": "kind", "types": "kinds",
    "trait": "interface", "traits": "interfaces", "method": "member function",
    "methods": "member functions", "feature": "capability", "features": "capabilities",
    "support": "enable", "supports": "enables", "library": "crate", "libraries": "crates",
    "compiler": "rustc", "syntax": "notation", "use": "employ", "using": "employing",
    "simple": "basic", "new": "novel", "value": "datum", "values": "data",
}

ACRONYM = re.compile(r"\(([A-Z]{2,6})\)")
LINKING = {"of", "and", "the", "for", "to", "in", "on", "a", "an"}
STOP = LINKING | {"is", "are", "be", "by", "with", "this", "that", "it", "its", "or", "as", "at", "from"}
CODE = re.compile(r"`[^`]*`")
WORD = re.compile(r"\w[\w'.-]*\w|\w|\S")


def reword(text: str, drop: list[str]) -> str:
    """The text with the names in `drop` and inline code taken out, and
    common words swapped for their synonyms."""
    text = CODE.sub(" ", text)
    text = re.sub(r"[*_\"]", " ", text)
    for name in sorted(filter(None, drop), key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    words = []
    for token in WORD.findall(text):
        low = token.lower()
        words.append(SYNONYMS.get(low, low) if token[0].isalpha() else token)
    sentence = " ".join(words)
    sentence = re.sub(r" ([,.;:!?)])", r"\1", sentence).replace("( ", "(")
    return re.sub(r"\s+", " ", sentence).strip(" .,;:")


def pick(items: list, n: int, salt: str) -> list:
    """A fixed sample of n items (by hash, so it does not depend on order)."""
    key = lambda item: hashlib.sha256((salt + item[0]).encode()).hexdigest()
    return sorted(items, key=key)[:n]


def tldr(corpora: Path, per_set: int):
    pages = sorted((corpora / "tldr-pages-en" / "pages").rglob("*.md"))
    corpus, descriptions = [], {}
    for path in pages:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        title = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("#") else path.stem
        doc_id = str(path.relative_to(corpora / "tldr-pages-en" / "pages").with_suffix(""))
        body = "\n".join(lines[1:]).strip()
        corpus.append({"_id": doc_id, "title": title, "text": body})
        said = [l[1:].strip() for l in lines if l.startswith(">")]
        said = [
            s for s in said
            if not s.startswith("More information")
            and not re.search(r"alias of|superseded|deprecated|[Ss]ee also", s)
        ]
        if said:
            description = " ".join(said)
            descriptions.setdefault(description, []).append((doc_id, title))
    candidates = []
    for description, owners in descriptions.items():
        if len(owners) != 1:
            continue
        doc_id, title = owners[0]
        question = reword(description, [title, title.replace("-", " ")])
        if content_words(question) >= 3:
            candidates.append((doc_id, f"which command is for this: {question}?"))
    chosen = pick(candidates, per_set, "tldr")
    queries = [(f"tldr-{i}", text, {doc_id: 1}) for i, (doc_id, text) in enumerate(chosen)]
    return corpus, queries


def spelled_out(before: str, acronym: str) -> bool:
    """Whether the words just before "(ACRONYM)" spell it out: their
    initials, small linking words aside, are the acronym's letters."""
    words = re.findall(r"[A-Za-z]+", before[-120:])
    for n in range(2, min(len(words), 9) + 1):
        tail = words[-n:]
        initials = "".join(w[0] for w in tail if w.lower() not in LINKING)
        if tail[0].lower() not in LINKING and initials.upper() == acronym:
            return True
    return False


def content_words(text: str) -> int:
    return sum(1 for w in re.findall(r"[a-z]{3,}", text.lower()) if w not in STOP)


def summary_of(text: str) -> str:
    match = re.search(r"^#+ *Summary\s*\n+(.+?)(?:\n\s*\n|\Z)", text, re.MULTILINE | re.DOTALL)
    if not match:
        return ""
    return " ".join(match.group(1).split())


def rfcs(corpora: Path, per_set: int):
    files = sorted((corpora / "rust-rfcs" / "text").glob("*.md"))
    corpus, summaries, defined = [], {}, {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        corpus.append({"_id": path.stem, "title": path.stem, "text": text})
        feature = re.search(r"^- Feature Name: *`?([^`\n]+)`?", text, re.MULTILINE)
        names = [path.stem.split("-", 1)[-1].replace("-", " ")]
        if feature and feature.group(1).strip().lower() not in ("n/a", "none", ""):
            name = feature.group(1).strip()
            names += [name, name.replace("_", " ")]
        summary = summary_of(text)
        first = re.split(r"(?<=[.!?])\s", summary, maxsplit=1)[0] if summary else ""
        if len(first.split()) >= 6:
            summaries.setdefault(first, []).append((path.stem, names))
        for match in ACRONYM.finditer(text):
            if spelled_out(text[: match.start()], match.group(1)):
                defined.setdefault(match.group(1), set()).add(path.stem)
    candidates = []
    for first, owners in summaries.items():
        if len(owners) == 1:
            doc_id, names = owners[0]
            question = reword(first, names)
            if content_words(question) >= 4:
                candidates.append((doc_id, f"which RFC says: {question}?"))
    summary_queries = pick(candidates, per_set * 3 // 4, "rfcs")
    acronyms = [
        (acronym, f"what does {acronym} stand for?", sorted(docs))
        for acronym, docs in sorted(defined.items())
        if len(docs) <= 3
    ]
    acronym_queries = pick(acronyms, per_set - len(summary_queries), "acronyms")
    queries = [(f"rfc-{i}", text, {doc_id: 1}) for i, (doc_id, text) in enumerate(summary_queries)]
    queries += [
        (f"rfc-acronym-{i}", text, {doc: 1 for doc in docs})
        for i, (_, text, docs) in enumerate(acronym_queries)
    ]
    return corpus, queries


def write(out: Path, corpus: list, queries: list):
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as f:
        for doc in corpus:
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8") as f:
        for query_id, text, _ in queries:
            f.write(json.dumps({"_id": query_id, "text": text}, ensure_ascii=False) + "\n")
    with open(out / "qrels" / "dev.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for query_id, _, judged in queries:
            for doc_id, score in judged.items():
                f.write(f"{query_id}\t{doc_id}\t{score}\n")


def main():
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", type=Path, default=here.parents[1] / ".." / "shared" / "corpora")
    parser.add_argument("--out", type=Path, default=here.parents[1] / "target" / "devsets")
    parser.add_argument("--per-set", type=int, default=300, help="questions per set")
    args = parser.parse_args()
    for name in ("tldr-pages-en", "rust-rfcs"):
        if not (args.corpora / name).is_dir():
            raise SystemExit(f"devsets: {args.corpora / name} is missing (--corpora)")
    for name, build in (("tldr", tldr), ("rfcs", rfcs)):
        corpus, queries = build(args.corpora, args.per_set)
        write(args.out / name, corpus, queries)
        print(f"{args.out / name}: {len(corpus)} documents, {len(queries)} questions")


if __name__ == "__main__":
    main()
