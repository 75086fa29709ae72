# kts — common tasks. `make help` lists them.
CARGO ?= cargo
RELEASE := target/release
SAMPLE := sample

.PHONY: help models mcp-client ocr-tools spark build demo test test-shared lint docs eval eval-dev bench bench-embed bench-query bench-graph bench-reindex bench-federation bench-routing bench-mcp bench-lexical bench-update bench-spark bench-pipeline fuzz clean-sample

help:
	@echo "make demo         write the bundled sample to $(SAMPLE)/ and run the pipeline on it"
	@echo "make test         run every self-contained test (needs tesseract and pdftoppm: apt-get install -y tesseract-ocr tesseract-ocr-eng poppler-utils)"
	@echo "make test-shared  run the suites that measure against ../shared or KTS_SHARED_DIR (fixtures, quality)"
	@echo "make lint         cargo fmt --check and clippy with warnings as errors"
	@echo "make docs         regenerate schemas/, man/ and completions/ from the code"
	@echo "make models       fetch the embedding model and ONNX Runtime (checksums pinned)"
	@echo "make spark        install PySpark (pinned) for pipelines/spark/kts-spark into pipelines/spark/.venv"
	@echo "make mcp-client   install the Python MCP SDK the kts-mcp tests use as their client (pinned)"
	@echo "make eval         retrieval quality on ../shared/eval/scifact (nDCG@10, recall@100, MRR@10)"
	@echo "make eval-dev     make eval's SciFact beside two sets built from ../shared/corpora (tldr pages, Rust RFCs), side by side, each step judged on all three"
	@echo "make bench        throughput benchmark of crawl | convert | chunk"
	@echo "make bench-pipeline  the whole pipeline on corpora/rust-rfcs, each stage's CPU time, end and peak memory, and how far the stages overlap"
	@echo "make bench-embed  embedding throughput against Python onnxruntime"
	@echo "make bench-query  query latency at 10k, 100k and 400k chunks, vector recall"
	@echo "make bench-lexical  BM25 top-10 from the lexical index against FTS5 at 10k, 100k and 1M chunks"
	@echo "make bench-update one document replaced in a scope of 100k and 1M chunks with vectors (vectors.delta) against vectors.bin written whole"
	@echo "make bench-graph  knowledge-graph build time and size against indexing, and its questions"
	@echo "make bench-reindex  batch reindex of a generated root of 10,000 scopes (SCOPES=N), keyword-only"
	@echo "make bench-federation  a scoped query against one store holding everything; fan-out over 60 scopes"
	@echo "make bench-mcp    warm search over kts-mcp (one client, 16 clients) against a cold kts-query, at 10k and 100k chunks"
	@echo "make bench-routing  routing accuracy and time, and scoped answers, on a generated root of 10,000 scopes (SCOPES=N)"
	@echo "make fuzz         run every fuzz target for FUZZ_SECONDS (default 60) each (cargo +nightly fuzz)"
	@echo "make bench-spark  kts-spark: --split on the rust-rfcs corpus with 1 and 2 executors; a root of 200 scopes against pipelines/reindex"

build:
	$(CARGO) build --release --workspace --bins

demo: models build
	$(RELEASE)/kts-sample $(SAMPLE)
	pipelines/demo.sh $(RELEASE) $(SAMPLE)

models:
	models/fetch

mcp-client:
	tools/kts-mcp/tests/python/setup

spark:
	pipelines/spark/setup

# Tests run against release builds: the demo, the evaluation and the benchmarks
# use them too, so every dependency is compiled once, in one profile.
test: models mcp-client ocr-tools
	$(CARGO) build --release --workspace --bins
	$(CARGO) test --release --workspace

# The OCR tests read scans with tesseract and pdftoppm; they fail, not skip,
# without them, so say how to install them before anything is built.
OCR_INSTALL := apt-get install -y tesseract-ocr tesseract-ocr-eng poppler-utils
ocr-tools:
	@for program in tesseract pdftoppm; do \
	  command -v $$program >/dev/null || { echo "make test needs $$program; install it (as root) with: $(OCR_INSTALL)"; exit 1; }; \
	done
	@tesseract --list-langs 2>/dev/null | grep -qx eng || { echo "tesseract has no English data; install it (as root) with: $(OCR_INSTALL)"; exit 1; }

test-shared: models spark
	$(CARGO) build --release --workspace --bins
	$(CARGO) test --release -p kts-tests --features shared-data -- --nocapture

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --all-features -- -D warnings

docs:
	$(CARGO) run --release -q -p kts-docgen

# The shared data, as the test suites find it.
SHARED := $(or $(KTS_SHARED_DIR),../shared)

eval: models build
	$(RELEASE)/kts-eval $(SHARED)/eval/scifact --split train --steps

# The development sets are written from ../shared/corpora by a committed
# script (pipelines/eval/devsets.py); a step is on by default only if it
# lowers none of the three sets by more than 0.002 and raises their mean.
eval-dev: models build
	python3 pipelines/eval/devsets.py --corpora $(SHARED)/corpora --out target/devsets
	$(RELEASE)/kts-eval $(SHARED)/eval/scifact:train target/devsets/tldr:dev target/devsets/rfcs:dev --steps --json target/eval-dev.json

bench: build
	pipelines/bench/ingest.sh

bench-pipeline: models build
	pipelines/bench/pipeline.sh

bench-lexical: build
	pipelines/bench/lexical.sh

bench-update: build
	pipelines/bench/update.sh

bench-embed: models build
	pipelines/bench/embed.sh

bench-query: models build
	pipelines/bench/query.sh

bench-graph: build
	pipelines/bench/graph.sh

SCOPES ?= 10000
bench-reindex: build
	pipelines/bench/reindex.sh $(SCOPES)

bench-mcp: models build
	pipelines/bench/mcp.sh

bench-federation: models build
	pipelines/bench/federation.sh

bench-routing: build
	$(CARGO) build --release -p kts-query --example bench
	SCOPES=$(SCOPES) pipelines/bench/routing.sh

bench-spark: models build spark
	pipelines/bench/spark.sh

FUZZ_SECONDS ?= 60
fuzz: build
	fuzz/run $(FUZZ_SECONDS)

clean-sample:
	rm -rf $(SAMPLE)
