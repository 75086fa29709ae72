# Batch reindexing of a knowledge root: each immediate, non-hidden sub-folder
# of ROOT is a scope, indexed into its own SCOPE/.kts/, incrementally (a stage
# re-runs only when its input changed) and in parallel across scopes.
#
#   make -f pipelines/reindex.mk ROOT=/data/deals -j4
#
# Settings: BIN=DIR (the kts binaries; default the project's target/release),
# EMBED=0 (leave out kts-embed: keyword-only indexes), GRAPH=0 (skip
# kts-graph), THREADS=N (threads per tool; default 1, as -j already runs
# scopes in parallel). pipelines/reindex is the same with flags.
#
# Each scope is a sub-make of reindex-scope.mk run inside SCOPE/.kts/cache/
# (the stages, and how they stay incremental, are described there), so that
# folder names (spaces, colons, ...) never become make targets: a scope is
# known here by its line number in the scope list. Its log is
# SCOPE/.kts/cache/reindex.log (the last run).
#
# A failed scope does not stop the others (its failure is recorded, so -k is
# not needed); the summary at the end names it and make exits non-zero.
# ROOT/.kts-reindex/ holds scopes.list, results.tsv (one line per scope:
# result, seconds, folder, detail) and summary.txt of the last run. A root
# without a catalog (ROOT/.kts-catalog.db) gets one at the end of the run.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules --no-print-directory

HERE := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))
BIN ?= $(HERE)../target/release
EMBED ?= 1
GRAPH ?= 1
THREADS ?= 1
KTS := $(abspath $(BIN))

ifndef ROOT
$(error usage: make -f pipelines/reindex.mk ROOT=DIR [-j N] [EMBED=0] [GRAPH=0] [BIN=DIR] [THREADS=N])
endif
ROOT_ABS := $(shell cd '$(ROOT)' 2>/dev/null && pwd)
ifeq ($(ROOT_ABS),)
$(error ROOT=$(ROOT) is not a folder)
endif
ifeq ($(wildcard $(KTS)/kts-crawl),)
$(error no kts binaries in BIN=$(KTS): build them (cargo build --release --bins) or set BIN)
endif

STATE := $(ROOT_ABS)/.kts-reindex
START := $(shell date +%s%6N)
# Listed while make reads this file, as the scopes are its targets.
SCOPE_COUNT := $(shell mkdir -p '$(STATE)' && cd '$(ROOT_ABS)' \
	&& find . -mindepth 1 -maxdepth 1 -type d ! -name '.*' ! -name $$'*\n*' -printf '%f\n' \
	| LC_ALL=C sort > '$(STATE)/scopes.list' \
	&& : > '$(STATE)/results.tsv' && wc -l < '$(STATE)/scopes.list')
SCOPES := $(addprefix scope-,$(shell seq $(SCOPE_COUNT)))

.PHONY: all $(SCOPES)

all: $(SCOPES)
	@results='$(STATE)/results.tsv'
	count() { awk -F'\t' -v r="$$1" '$$1 == r' "$$results" | wc -l; }
	reindexed=$$(count reindexed) unchanged=$$(count unchanged) failed=$$(count failed)
	rejected=$$(awk -F'\t' '$$1 == "reindexed" && $$4 ~ / [1-9][0-9]* failed$$/' "$$results" | wc -l)
	ms=$$(( ($${EPOCHREALTIME/./} - $(START)) / 1000 ))
	{
		printf 'reindex %s: %d scopes in %d.%03d s: %d reindexed, %d unchanged, %d failed\n' \
			'$(ROOT_ABS)' $(SCOPE_COUNT) $$((ms / 1000)) $$((ms % 1000)) \
			"$$reindexed" "$$unchanged" "$$failed"
		if ((rejected > 0)); then
			echo "  $$rejected reindexed scopes have documents that could not be indexed (see their logs)"
		fi
		awk -F'\t' -v root='$(ROOT_ABS)' '$$1 == "failed" {
			printf "  failed: %s: %s (log: %s/%s/.kts/cache/reindex.log)\n", $$3, $$4, root, $$3 }' "$$results"
		awk -F'\t' '$$1 == "reindexed" && ++n <= 20 { printf "  reindexed: %s: %s\n", $$3, $$4 }
			END { if (n > 20) printf "  ... and %d more reindexed (see %s)\n", n - 20, FILENAME }' "$$results"
	} | tee '$(STATE)/summary.txt'
	# The first run builds the root's catalog, which routes questions asked
	# of the root (kts-query ROOT); kts-index keeps it current from then on.
	if [[ ! -f '$(ROOT_ABS)/.kts-catalog.db' ]]; then
		{ '$(KTS)/kts-catalog' '$(ROOT_ABS)' --quiet 2>&1 || true; } | sed 's/^/  /' \
			| tee -a '$(STATE)/summary.txt'
	fi
	((failed == 0))

# (Bash builtins where possible: with 10,000 scopes, the forks of a run where
# nothing changed are most of its time.)
$(SCOPES): scope-%:
	@name=$$(sed -n '$*{p;q}' '$(STATE)/scopes.list')
	dir='$(ROOT_ABS)'/$$name
	cache=$$dir/.kts/cache
	started=$${EPOCHREALTIME/./}
	result=failed
	if { [[ -d $$cache ]] || mkdir -p "$$cache"; } 2>/dev/null && {
		printf '# %(%FT%T%z)T reindex %s\n' -1 "$$dir"
		SCOPE_DIR=$$dir $(MAKE) -s -C "$$cache" -f '$(HERE)reindex-scope.mk' \
			KTS='$(KTS)' EMBED='$(EMBED)' GRAPH='$(GRAPH)' THREADS='$(THREADS)'
	} >"$$cache/reindex.log" 2>&1; then
		result=unchanged
	fi
	# reindex-scope.mk writes `ran` when a stage after the crawl ran.
	if [[ -e $$cache/ran ]]; then
		rm -f "$$cache/ran"
		[[ $$result == failed ]] || result=reindexed
	fi
	case $$result in
		unchanged) detail= ;;
		reindexed) detail=$$(sed 's/^kts-index: //' "$$cache/index.stamp") ;;
		# Why: this file's own message, else a tool's fatal error (not a
		# document's "error (at FILE)"), else make's last word.
		failed)
			log=$$cache/reindex.log
			detail=$$(grep -m1 '^reindex:' "$$log" || grep -E '^kts-[a-z]+: error: ' "$$log" | tail -n1 \
				|| grep -F '***' "$$log" | tail -n1 || echo "cannot write $$log")
			;;
	esac
	ms=$$(( ($${EPOCHREALTIME/./} - started) / 1000 ))
	printf -v line '%s\t%d.%03d\t%s\t%s' "$$result" $$((ms / 1000)) $$((ms % 1000)) "$${name//$$'\t'/ }" "$${detail//$$'\t'/ }"
	# One short line per append, so lines from parallel scopes do not interleave.
	echo "$$line" >> '$(STATE)/results.tsv'
	if [[ $$result != unchanged ]]; then
		printf '%-9s %7s s  %s  %s\n' "$$result" "$$((ms / 1000)).$$(printf %03d $$((ms % 1000)))" "$$name" "$$detail"
	fi
