#!/usr/bin/env python3
"""Reference embeddings for kts-embed's correctness test, computed independently
of it: Python onnxruntime and Hugging Face tokenizers on the same model files.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install onnxruntime==1.31.1 tokenizers numpy
    models/fetch && /tmp/ref/bin/python models/reference.py [MODEL_ID]

Reads models/MODEL_ID.json (default all-minilm-l6-v2-int8) and the files
models/fetch put in models/cache/MODEL_ID/, embeds the fixed TEXTS below as
documents (document prefix, truncation to max_tokens, pooling, normalisation
as the manifest says) and writes tools/kts-embed/tests/reference_vectors.json:
the texts, their token ids and their vectors rounded to 6 decimals.
"""

import json
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

MODELS = Path(__file__).resolve().parent
OUT = MODELS.parent / "tools" / "kts-embed" / "tests" / "reference_vectors.json"

LONG = " ".join(
    f"Clause {n}: the supplier shall retain audit records for seven years and "
    f"make them available to the regulator on request."
    for n in range(1, 25)
)

TEXTS = [
    "hello world",
    "How do I reset my password?",
    "Annual leave requests must be approved by your line manager at least two weeks in advance.",
    "ERROR E1042: connection to the database timed out after 30 seconds; retry with exponential backoff.",
    "Le café coûte 3,50 € — naïve résumé, Größe, smörgåsbord.",
    "東京の天気は晴れです。数据库连接失败。",
    "# Incident response\n\n1. Page the on-call engineer.\n2. Open a ticket.\n\n| Severity | SLA |\n|---|---|\n| P1 | 1 h |",
    LONG,
]


def load_manifest(model_id):
    with open(MODELS / f"{model_id}.json", encoding="utf-8") as f:
        return json.load(f)


def tokenizer_for(manifest, cache):
    tokenizer = Tokenizer.from_file(str(cache / manifest["tokenizer"]))
    tokenizer.enable_truncation(max_length=manifest["max_tokens"])
    tokenizer.no_padding()
    return tokenizer


def embed_one(session, manifest, ids, type_ids):
    names = manifest["inputs"]
    feed = {
        names["input_ids"]: np.array([ids], dtype=np.int64),
        names["attention_mask"]: np.ones((1, len(ids)), dtype=np.int64),
    }
    if names.get("token_type_ids"):
        feed[names["token_type_ids"]] = np.array([type_ids], dtype=np.int64)
    (out,) = session.run([manifest["output"]], feed)
    pooling = manifest["pooling"]
    if pooling == "mean":
        vector = out[0].astype(np.float64).mean(axis=0)
    elif pooling == "cls":
        vector = out[0][0].astype(np.float64)
    else:
        vector = out[0].astype(np.float64)
    if manifest["normalize"]:
        vector = vector / np.linalg.norm(vector)
    return vector


def to_json(result):
    """Indented JSON with each list on one line: small, readable diffs."""
    def dump(value):
        return json.dumps(value, ensure_ascii=False)
    entries = ",\n".join(
        "  {" + ", ".join(f"{dump(k)}: {dump(v)}" for k, v in entry.items()) + "}"
        for entry in result["texts"])
    head = "".join(f" {dump(k)}: {dump(v)},\n" for k, v in result.items() if k != "texts")
    return "{\n" + head + ' "texts": [\n' + entries + "\n ]\n}\n"


def main(argv):
    model_id = argv[0] if argv else "all-minilm-l6-v2-int8"
    manifest = load_manifest(model_id)
    cache = MODELS / "cache" / model_id
    tokenizer = tokenizer_for(manifest, cache)
    session = ort.InferenceSession(str(cache / manifest["model"]), providers=["CPUExecutionProvider"])
    entries = []
    for text in TEXTS:
        encoding = tokenizer.encode(manifest.get("document_prefix", "") + text)
        vector = embed_one(session, manifest, encoding.ids, encoding.type_ids)
        entries.append({
            "text": text,
            "token_ids": encoding.ids,
            "embedding": [round(float(x), 6) for x in vector],
        })
        print(f"reference: {len(encoding.ids):3} tokens  {text[:50]!r}", file=sys.stderr)
    result = {
        "model": model_id,
        "generated_by": "models/reference.py (Python onnxruntime "
                        f"{ort.__version__}, tokenizers, numpy)",
        "texts": entries,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(to_json(result), encoding="utf-8")
    print(f"reference: wrote {OUT.relative_to(MODELS.parent)}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
