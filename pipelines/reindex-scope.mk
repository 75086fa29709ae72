# The stages of one scope, for pipelines/reindex.mk (one sub-make per scope).
# Run inside SCOPE/.kts/cache/, with the scope folder in the environment:
#
#   SCOPE_DIR=/data/deals/x make -C /data/deals/x/.kts/cache -f pipelines/reindex-scope.mk \
#       KTS=target/release [EMBED=0] [GRAPH=0] [THREADS=1]
#
# The stage outputs are kept here as files, each made from the one before:
#
#   crawl.jsonl    kts-crawl --changed-only: what differs from the index (new,
#                  changed and deleted files). kts-crawl always runs (it reads
#                  only files whose size or mtime changed), but the file is
#                  rewritten only when its content changes, so make's
#                  timestamps decide which later stages run.
#   convert.jsonl  kts-convert of those files
#   chunk.jsonl    kts-chunk
#   embed.jsonl    kts-embed (not with EMBED=0)
#   index.stamp    kts-index applied the stream (additions, updates, and the
#                  deletions kts-crawl reported); holds its summary line
#   graph.stamp    kts-graph brought the graph up to date (not with GRAPH=0)
#   settings       the settings the index was built with
#   unindexed      how many documents are known not to be indexed (below)
#   ran            the stages after the crawl that ran, one a line (convert,
#                  index, graph; for reindex.mk's result line)
#   prepared       with embeddings, how reindex.mk's first pass went (below)
#   reindex.lock   held by the run working on the scope (reindex.mk for each
#                  pass, kts-spark --split for the whole run)
#
# With embeddings, reindex.mk makes a scope in two passes so that one
# kts-embed serves many scopes: `make chunk.jsonl` (crawl, convert, chunk),
# then reindex-embed writes embed.jsonl for the scopes whose chunks changed,
# then `make -o crawl.jsonl scope` (the rest, without crawling again; the
# embed stage runs here only for a scope the shared embedder did not serve).
# reindex.mk skips the second pass when the files after chunk.jsonl are up to
# date by make's rule (each no older than the one it is made from): keep that
# check in step with the rules below.
#
# Once kts-index has applied a crawl, the next crawl reports nothing, or only
# the files that could not be converted (they stay "new" until indexed).
# crawl.jsonl then takes that content but keeps its time, so that a run with
# nothing new does nothing. Such a file is tried again when it changes
# (delete crawl.jsonl to retry it sooner). Until it is indexed, it counts in
# `unindexed`: kts-index's "N failed" when the index stage runs, else the
# lines of a crawl.jsonl that the index stage has already applied.
#
# A scope with no index yet, or indexed with other settings (EMBED), is
# rebuilt: a full crawl and `kts-index --reindex`. Deleting the cache folder
# therefore rebuilds the scope.
#
# kts-index and kts-graph do not wait for another writer of the scope: the
# scope fails at once, saying so, and the others go on.
#
# Each stage writes its output aside (FILE.new) and renames it into place
# when done: a stage killed midway (a lost Spark task, a machine going down)
# leaves no output that looks complete, and runs again next time.
#
# In the recipes, `|| (($$? == 1))`: exit 1 means some records were rejected
# (a corrupt document becomes an error record, which kts-index counts as
# failed); the stream is complete and the scope is still indexed. Exit 2 (a
# damaged index, a missing model, a full disk) fails the scope.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.DELETE_ON_ERROR:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules

ifndef SCOPE_DIR
$(error SCOPE_DIR (environment) names the scope folder; see pipelines/reindex.mk)
endif
ifndef KTS
$(error KTS=DIR names the folder of the kts binaries)
endif
# The binaries' folder as one shell word (it may hold an apostrophe).
KTS_Q := '$(subst ','\'',$(value KTS))'
EMBED ?= 1
GRAPH ?= 1
THREADS ?= 1

INDEX_INPUT := $(if $(filter 0,$(EMBED)),chunk.jsonl,embed.jsonl)
LAST := $(if $(filter 0,$(GRAPH)),index.stamp,graph.stamp)
SETTINGS := embed=$(if $(filter 0,$(EMBED)),0,1)

# True when the scope is rebuilt rather than updated.
rebuild = [[ ! -f "$$SCOPE_DIR/.kts/kts.db" || "$$(cat settings 2>/dev/null)" != '$(SETTINGS)' ]]

.PHONY: scope FORCE
scope: $(LAST)
FORCE:

crawl.jsonl: FORCE
	@if $(rebuild); then only=; else only=--changed-only; fi
	status=0
	$(KTS_Q)/kts-crawl --stats $$only "$$SCOPE_DIR" > crawl.new 2> crawl.err || status=$$?
	cat crawl.err >&2
	((status <= 1))
	if [[ -z $$only ]]; then
		mv crawl.new crawl.jsonl
	elif cmp -s crawl.new crawl.jsonl; then
		: # the same work as last time: crawl.jsonl keeps its time
	elif [[ -f crawl.jsonl && index.stamp -nt crawl.jsonl ]] && ! grep -Fxvq -f crawl.jsonl crawl.new; then
		# Every line is one that the last successful run already gave
		# kts-index: what is left is the files that failed to convert, or
		# nothing. Keep the old time, so that nothing runs again.
		touch -r crawl.jsonl crawl.new
		mv crawl.new crawl.jsonl
	else
		mv crawl.new crawl.jsonl
	fi
	if [[ -f index.stamp && index.stamp -nt crawl.jsonl ]]; then
		unindexed=$$(wc -l < crawl.jsonl)
		echo "$$unindexed" > unindexed
		if ((unindexed > 0)); then
			echo "# $$unindexed documents could not be indexed (crawl.jsonl lists them); each is tried again when it changes" >&2
		fi
	fi

convert.jsonl: crawl.jsonl
	@echo convert >> ran
	$(KTS_Q)/kts-convert --stats --threads $(THREADS) < $< > $@.new || (($$? == 1))
	mv $@.new $@

chunk.jsonl: convert.jsonl
	@$(KTS_Q)/kts-chunk --stats < $< > $@.new || (($$? == 1))
	mv $@.new $@

embed.jsonl: chunk.jsonl
	@$(KTS_Q)/kts-embed --stats --threads $(THREADS) < $< > $@.new || (($$? == 1))
	mv $@.new $@

index.stamp: $(INDEX_INPUT)
	@echo index >> ran
	if $(rebuild); then again=--reindex; else again=; fi
	status=0
	$(KTS_Q)/kts-index --no-wait $$again "$$SCOPE_DIR" < $< 2> index.err || status=$$?
	cat index.err >&2
	((status <= 1))
	echo '$(SETTINGS)' > settings
	grep -m1 ' added, ' index.err > $@.new
	sed -n 's/.* \([0-9]*\) failed$$/\1/p' $@.new > unindexed
	mv $@.new $@
	rm -f index.err

graph.stamp: index.stamp
	@echo graph >> ran
	$(KTS_Q)/kts-graph --no-wait "$$SCOPE_DIR" 2>&1 | tee $@.new >&2
	mv $@.new $@
