complete -c kts-eval -l split -d 'The judgments to evaluate against: qrels/SPLIT.tsv' -r
complete -c kts-eval -l modes -d 'Retrieval modes to measure, comma-separated' -r -f -a "bm25\t''
vector\t''
hybrid\t''"
complete -c kts-eval -l work -d 'Folder for the index [default: <temp>/kts-eval-<name>-<corpus digest>]; with several data sets, one folder per set inside it' -r -F
complete -c kts-eval -l top-k -d 'Hits asked of kts-query per query (recall is cut at 100)' -r
complete -c kts-eval -l queries -d 'Evaluate only the first N judged queries (in queries.jsonl order)' -r
complete -c kts-eval -l json -d 'Write the JSON report to FILE instead of stdout' -r -F
complete -c kts-eval -l chunk-size -d 'Passed to kts-chunk as --size (target chunk size in characters)' -r
complete -c kts-eval -l chunk-overlap -d 'Passed to kts-chunk as --overlap' -r
complete -c kts-eval -l query-arg -d 'An extra argument for kts-query, e.g. --query-arg=--candidates=300 (repeatable)' -r
complete -c kts-eval -l embed-arg -d 'An extra argument for kts-embed, e.g. --embed-arg=--model=ID to measure another model (repeatable); an index made with other ones is rebuilt' -r
complete -c kts-eval -l keep -d 'Also keep the doc stream and kts-query\'s output in WORK'
complete -c kts-eval -l reindex -d 'Rebuild the index even when WORK holds one that could be reused'
complete -c kts-eval -l any-build -d 'Reuse WORK\'s index even when kts-chunk, kts-embed or kts-index were rebuilt since it was made (same corpus and chunking): for measuring query-side changes while the rest of the workspace relinks'
complete -c kts-eval -l steps -d 'Also measure each step of kts-query\'s pipeline on and off (in the last mode given), against every step off and the default steps'
complete -c kts-eval -l fit-confidence -d 'Fit kts-query\'s confidence model on this run\'s first 10 hits per query and report its coefficients (for rank/confidence.rs)'
complete -c kts-eval -s h -l help -d 'Print help'
complete -c kts-eval -s V -l version -d 'Print version'
