# Batch reindexing of a knowledge root: each immediate, non-hidden sub-folder
# of ROOT is a scope, indexed into its own SCOPE/.kts/, incrementally (a stage
# re-runs only when its input changed) and in parallel across scopes.
#
#   make -f pipelines/reindex.mk ROOT=/data/deals -j4
#
# Settings: BIN=DIR (the kts binaries; default the project's target/release),
# EMBED=0 (leave out kts-embed: keyword-only indexes), GRAPH=0 (skip
# kts-graph), THREADS=N (threads per tool; default 1, as -j already runs
# scopes in parallel), EMBEDDERS=N (kts-embed processes shared by the scopes;
# default make's -j). pipelines/reindex is the same with flags.
#
# Each scope is a sub-make of reindex-scope.mk run inside SCOPE/.kts/cache/
# (the stages, and how they stay incremental, are described there), so that
# folder names (spaces, colons, ...) never become make targets: a scope is
# known here by its line number in the scope list. Its log is
# SCOPE/.kts/cache/reindex.log (the last run).
#
# With embeddings, the scopes share the embedder (loading the model takes
# about 0.5 s, longer than a small scope's chunks take to embed): each scope
# is made in two passes. prepare-N crawls, converts and chunks; then
# reindex-embed streams the new chunks of all scopes through EMBEDDERS
# kts-embed processes and splits the vectors back into each scope's
# embed.jsonl; then scope-N makes the rest (index, graph). The second pass
# makes whatever the first ones left, so a scope the shared embedder could
# not serve is embedded on its own, and its log says why.
#
# A failed scope does not stop the others (its failure is recorded, so -k is
# not needed); the summary at the end names it and make exits non-zero. So
# does a scope with documents that could not be indexed (corrupt files,
# error records): they count, run after run, until they change and are
# indexed; so does a folder whose name holds a newline (no scope's may); and
# so do files at the root's top level, which are in no scope (the summary
# says how many). A link to a scope folder whose target is gone is left out,
# and the summary names it. A scope folder removed while the run goes is `gone`: it
# is not created again, and it fails nothing. While a run works on a scope
# it holds SCOPE/.kts/cache/reindex.lock (as kts-spark --split does): a
# scope another run is indexing fails at once, saying so. OUTCOME=FILE: the
# run's status goes there instead (0 all done, 1 any of the above) and make
# exits 0 unless it fails itself (pipelines/reindex exits with it).
# ROOT/.kts-reindex/ (or STATE=DIR) holds scopes.list, results.tsv (one line
# per scope: result, seconds, folder, detail, documents not indexed) and
# summary.txt of the last run. The detail says what ran: kts-index's counts,
# or kts-graph's line when only the graph was brought up to date.
# A root without a catalog (ROOT/.kts-catalog.db), or whose catalog does not
# list its scope folders as they are, gets one at the end of the run. LIST=FILE (folder names, one a line) reindexes those scopes only, and
# leaves the catalog to the caller (kts-spark's tasks run this on their share
# of a root); `make ... quiet` only records the scopes with nothing to do
# (kts-spark's driver asks so before it deals out the others).

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
EMBEDDERS ?=
KTS := $(abspath $(BIN))

# A value as one shell word, whatever it holds (apostrophes, spaces, $, `).
quote = '$(subst ','\'',$1)'
# An absolute path by the shell's rules (make's abspath splits at spaces).
absolute = $(shell realpath -ms -- $(call quote,$1))

ifndef ROOT
$(error usage: make -f pipelines/reindex.mk ROOT=DIR [-j N] [EMBED=0] [GRAPH=0] [BIN=DIR] [THREADS=N] [EMBEDDERS=N] [LIST=FILE] [STATE=DIR] [OUTCOME=FILE])
endif
ROOT_ABS := $(shell cd -- $(call quote,$(value ROOT)) 2>/dev/null && pwd)
ifeq ($(ROOT_ABS),)
$(error ROOT=$(ROOT) is not a folder)
endif
ifeq ($(wildcard $(KTS)/kts-crawl),)
$(error no kts binaries in BIN=$(KTS): build them (cargo build --release --bins) or set BIN)
endif

STATE := $(if $(value STATE),$(call absolute,$(value STATE)),$(ROOT_ABS)/.kts-reindex)
# The paths as shell words, for the recipes.
ROOT_Q := $(call quote,$(ROOT_ABS))
STATE_Q := $(call quote,$(STATE))
KTS_Q := $(call quote,$(KTS))
OUTCOME_Q := $(call quote,$(value OUTCOME))
START := $(shell date +%s%6N)
ifdef LIST
LIST_SCOPES := cat $(call quote,$(call absolute,$(value LIST)))
else
LIST_SCOPES := find . -mindepth 1 -maxdepth 1 -xtype d ! -name '.*' ! -name $$'*\n*' -printf '%f\n'
endif
# Listed while make reads this file, as the scopes are its targets.
SCOPE_COUNT := $(shell mkdir -p $(STATE_Q) && cd -- $(ROOT_Q) \
	&& $(LIST_SCOPES) | LC_ALL=C sort > $(STATE_Q)/scopes.list \
	&& : > $(STATE_Q)/results.tsv && wc -l < $(STATE_Q)/scopes.list)
SCOPES := $(addprefix scope-,$(shell seq $(SCOPE_COUNT)))

# The scopes with nothing to do: no file changed since their index was built
# (one kts-crawl checks them all), and every stage file is in place, each no
# older than the one it is made from, built with these settings (the rules
# and `settings` of reindex-scope.mk). With thousands of scopes, starting a
# crawl and a sub-make per scope only to learn that nothing changed would be
# most of a quiet run; these scopes get their result line and nothing else.
CHAIN := crawl.jsonl convert.jsonl chunk.jsonl $(if $(filter 0,$(EMBED)),,embed.jsonl) \
	index.stamp $(if $(filter 0,$(GRAPH)),,graph.stamp)
QUIET := $(shell cd -- $(ROOT_Q) && $(KTS_Q)/kts-crawl . --unchanged-scopes < $(STATE_Q)/scopes.list 2>/dev/null \
	| while IFS= read -r name; do \
		cache=$$name/.kts/cache done=true from= settings=; \
		for to in $(CHAIN); do \
			[[ -e $$cache/$$to && ( -z $$from || ! $$cache/$$from -nt $$cache/$$to ) ]] || done=false; from=$$to; \
		done; \
		{ read -r settings < "$$cache/settings"; } 2>/dev/null || :; \
		if [[ $$done == true && $$settings == embed=$(if $(filter 0,$(EMBED)),0,1) ]]; then printf '%s\n' "$$name"; fi; \
	done | awk 'FILENAME == "-" { quiet[$$0]; next } $$0 in quiet { print FNR }' - $(STATE_Q)/scopes.list \
	| tee $(STATE_Q)/quiet.list)
QUIET_SCOPES := $(addprefix scope-,$(QUIET))
# The sub-make of a scope's stages is `SCOPE_DIR=$$dir $(MAKE) $(STAGES)`:
# make hands its job slots only to recipes where it reads $(MAKE) itself,
# not inside another variable ("jobserver unavailable" in every scope's log).
STAGES = -s -C "$$cache" -f $(call quote,$(HERE)reindex-scope.mk) \
	KTS=$(KTS_Q) EMBED='$(EMBED)' GRAPH='$(GRAPH)' THREADS='$(THREADS)'
# The stage folder, made inside the scope folder only while that is there: a
# scope removed since it was listed must not come back (mkdir -p would make it).
CACHE_DIR = { [[ -d $$cache ]] || (cd "$$dir" && mkdir -p .kts/cache); } 2>/dev/null
# The scope's lock, held until the recipe ends; fails, saying so in the log,
# when another run (kts-spark --split) holds it.
LOCK_SCOPE = { exec {lock}>"$$cache/reindex.lock" \
	&& { flock -n "$$lock" || { echo "reindex: another run is indexing $$dir"; false; }; }; }
# A scope folder that is not there when its result is written was removed
# during the run.
GONE = [[ -d $$dir ]] || result=gone

.PHONY: all $(SCOPES)

all: $(SCOPES)
	@results=$(STATE_Q)/results.tsv
	count() { awk -F'\t' -v r="$$1" '$$1 == r' "$$results" | wc -l; }
	reindexed=$$(count reindexed) unchanged=$$(count unchanged) failed=$$(count failed) gone=$$(count gone)
	unindexed=$$(awk -F'\t' '$$1 != "failed" && $$5 > 0' "$$results" | wc -l)
	skipped=0 loose=0 broken=
	if [[ -z $(call quote,$(value LIST)) ]]; then
		skipped=$$(cd -- $(ROOT_Q) && find . -mindepth 1 -maxdepth 1 -xtype d ! -name '.*' -name $$'*\n*' -printf . | wc -c)
		loose=$$(cd -- $(ROOT_Q) && find . -mindepth 1 -maxdepth 1 -xtype f ! -name '.*' -printf . | wc -c)
		broken=$$(cd -- $(ROOT_Q) && find . -mindepth 1 -maxdepth 1 -xtype l ! -name '.*' \
			-printf '  left out: %f: a link to %l, which is not there\n')
	fi
	ms=$$(( ($${EPOCHREALTIME/./} - $(START)) / 1000 ))
	{
		printf 'reindex %s: %d scopes in %d.%03d s: %d reindexed, %d unchanged, %d failed%s\n' \
			$(ROOT_Q) $(SCOPE_COUNT) $$((ms / 1000)) $$((ms % 1000)) \
			"$$reindexed" "$$unchanged" "$$failed" "$$( ((gone == 0)) || echo ", $$gone gone")"
		awk -F'\t' -v root=$(ROOT_Q) '$$1 == "failed" {
			printf "  failed: %s: %s (log: %s/%s/.kts/cache/reindex.log)\n", $$3, $$4, root, $$3 }' "$$results"
		awk -F'\t' '$$1 == "gone" { printf "  gone: %s: %s\n", $$3, $$4 }' "$$results"
		awk -F'\t' -v root=$(ROOT_Q) '$$1 != "failed" && $$5 > 0 {
			printf "  not indexed: %s: %d of its documents (log: %s/%s/.kts/cache/reindex.log)\n", $$3, $$5, root, $$3 }' \
			"$$results"
		awk -F'\t' '$$1 == "reindexed" && ++n <= 20 { printf "  reindexed: %s: %s\n", $$3, $$4 }
			END { if (n > 20) printf "  ... and %d more reindexed (see %s)\n", n - 20, FILENAME }' "$$results"
		if ((skipped > 0)); then
			printf '  skipped: %d folder(s) whose name holds a newline, which a scope name may not (rename them)\n' \
				"$$skipped"
		fi
		[[ -z $$broken ]] || echo "$$broken"
		if ((loose > 0)); then
			printf '  not indexed: %d file(s) at the top level of the root: its scopes are its sub-folders (move them into one)\n' \
				"$$loose"
		fi
	} | tee $(STATE_Q)/summary.txt
	# The first run builds the root's catalog, which routes questions asked
	# of the root (kts-query ROOT); kts-index keeps its rows current, and a
	# scope folder renamed, added or removed has it rebuilt.
	if [[ -z $(call quote,$(value LIST)) ]]; then
		{ $(KTS_Q)/kts-catalog $(ROOT_Q) --if-stale --quiet 2>&1 || true; } | sed 's/^/  /' \
			| tee -a $(STATE_Q)/summary.txt
	fi
	status=$$((failed > 0 || unindexed > 0 || skipped > 0 || loose > 0))
	if [[ -n $(OUTCOME_Q) ]]; then
		echo "$$status" > $(OUTCOME_Q)
	else
		exit "$$status"
	fi

ifeq ($(EMBED),0)
# One pass: all the stages of a scope in one sub-make.
FIRST_PASS := first=ok first_us=0
STAGES_DONE := false
LATER_PASS :=
LOG := >
else
# Two passes around the shared embedder. The first one leaves its outcome and
# its time in SCOPE/.kts/cache/prepared; the second one runs if it was ok, and
# leaves out the crawl, which the first one brought up to date.
FIRST_PASS := read -r first first_us < "$$cache/prepared" 2>/dev/null || first=failed first_us=0
# Nor does the second pass run when it would do nothing: each stage file after
# chunk.jsonl is there and no older than the one it is made from (make's own
# rule, on reindex-scope.mk's chain), as in a run where nothing changed.
STAGES_DONE := { done=true from=chunk.jsonl; \
	for to in embed.jsonl index.stamp $(if $(filter 0,$(GRAPH)),,graph.stamp); do \
		[[ -e $$cache/$$to && ! $$cache/$$from -nt $$cache/$$to ]] || done=false; from=$$to; \
	done; $$done; }
LATER_PASS := -o crawl.jsonl
LOG := >>
PREPARED := $(addprefix prepare-,$(filter-out $(QUIET),$(shell seq $(SCOPE_COUNT))))
.PHONY: embedded $(PREPARED)

$(filter-out $(QUIET_SCOPES),$(SCOPES)): embedded

embedded: $(PREPARED)
	@while IFS= read -r name; do
		printf '%s\n' $(ROOT_Q)/"$$name"/.kts/cache
	done < $(STATE_Q)/scopes.list \
	| $(call quote,$(HERE)reindex-embed) --bin $(KTS_Q) --threads '$(THREADS)' \
		--jobs '$(or $(EMBEDDERS),$(patsubst -j%,%,$(filter -j%,$(MAKEFLAGS))),1)' \
	|| echo 'reindex: the shared embedder failed: each scope is embedded on its own' >&2

$(PREPARED): prepare-%:
	@name=$$(sed -n '$*{p;q}' $(STATE_Q)/scopes.list)
	dir=$(ROOT_Q)/$$name
	cache=$$dir/.kts/cache
	started=$${EPOCHREALTIME/./}
	result=failed
	if $(CACHE_DIR) && {
		printf '# %(%FT%T%z)T reindex %s\n' -1 "$$dir"
		$(LOCK_SCOPE) && SCOPE_DIR=$$dir $(MAKE) $(STAGES) chunk.jsonl
	} >"$$cache/reindex.log" 2>&1; then
		result=ok
	fi
	echo "$$result $$(( $${EPOCHREALTIME/./} - started ))" 2>/dev/null > "$$cache/prepared" || :
endif

.PHONY: quiet
$(QUIET_SCOPES): quiet
quiet:
	@awk 'FILENAME == ARGV[1] { quiet[$$0]; next }
		FNR in quiet { gsub(/\t/, " "); printf "unchanged\t0.000\t%s\t\t0\n", $$0 }' \
		$(STATE_Q)/quiet.list $(STATE_Q)/scopes.list >> $(STATE_Q)/results.tsv

# (Bash builtins where possible: with 10,000 scopes, the forks of a run where
# nothing changed are most of its time.)
$(filter-out $(QUIET_SCOPES),$(SCOPES)): scope-%:
	@name=$$(sed -n '$*{p;q}' $(STATE_Q)/scopes.list)
	dir=$(ROOT_Q)/$$name
	cache=$$dir/.kts/cache
	started=$${EPOCHREALTIME/./}
	result=failed
	$(FIRST_PASS)
	if [[ $$first != ok ]]; then
		: # the first pass failed (the log says why)
	elif $(STAGES_DONE); then
		result=unchanged
	elif $(CACHE_DIR) && {
		[[ -n '$(LATER_PASS)' ]] || printf '# %(%FT%T%z)T reindex %s\n' -1 "$$dir"
		$(LOCK_SCOPE) && SCOPE_DIR=$$dir $(MAKE) $(STAGES) $(LATER_PASS) scope
	} $(LOG)"$$cache/reindex.log" 2>&1; then
		result=unchanged
	fi
	# reindex-scope.mk writes in `ran` the stages after the crawl that ran.
	ran=
	if [[ -e $$cache/ran ]]; then
		read -r -d '' ran < "$$cache/ran" || :
		rm -f "$$cache/ran"
		[[ $$result == failed ]] || result=reindexed
	fi
	$(GONE)
	unindexed=0
	if [[ $$result != failed && $$result != gone ]]; then
		read -r unindexed < "$$cache/unindexed" 2>/dev/null || unindexed=0
	fi
	case $$result in
		unchanged) detail= ;;
		gone) detail='the folder was removed during the run' ;;
		reindexed)
			if [[ $$ran == *index* ]]; then
				detail=$$(sed 's/^kts-index: //' "$$cache/index.stamp")
			else
				detail=$$(tail -n1 "$$cache/graph.stamp")
			fi
			;;
		# Why: this file's own message, else a tool's fatal error (not a
		# document's "error (at FILE)"), else make's last word.
		failed)
			log=$$cache/reindex.log
			detail=$$(grep -m1 '^reindex:' "$$log" || grep -E '^kts-[a-z]+: error: ' "$$log" | tail -n1 \
				|| grep -F '***' "$$log" | tail -n1 || echo "cannot write $$log")
			;;
	esac
	ms=$$(( ($${EPOCHREALTIME/./} - started + first_us) / 1000 ))
	printf -v line '%s\t%d.%03d\t%s\t%s\t%s' "$$result" $$((ms / 1000)) $$((ms % 1000)) "$${name//$$'\t'/ }" \
		"$${detail//$$'\t'/ }" "$$unindexed"
	# One short line per append, so lines from parallel scopes do not interleave.
	echo "$$line" >> $(STATE_Q)/results.tsv
	if [[ $$result != unchanged ]]; then
		printf '%-9s %7s s  %s  %s\n' "$$result" "$$((ms / 1000)).$$(printf %03d $$((ms % 1000)))" "$$name" "$$detail"
	fi
