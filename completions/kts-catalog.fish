complete -c kts-catalog -l search -d 'Write the scopes matching TEXT, best first, as kts.scope/1 records with a score, instead of rebuilding the catalog' -r
complete -c kts-catalog -l limit -d 'Scopes --search writes at most (1 or more)' -r
complete -c kts-catalog -l list -d 'Write the catalog\'s rows as kts.scope/1 records instead of rebuilding it'
complete -c kts-catalog -l if-stale -d 'Rebuild only when the catalog is missing or its scopes are not the indexed folders of the root as they are now (one renamed, added or removed since)'
complete -c kts-catalog -s q -l quiet -d 'Print no warnings or per-scope errors (the summary and exit status still tell)'
complete -c kts-catalog -s h -l help -d 'Print help'
complete -c kts-catalog -s V -l version -d 'Print version'
