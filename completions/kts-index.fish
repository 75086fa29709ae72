complete -c kts-index -l batch -d 'Commit after this many documents (or after a second)' -r
complete -c kts-index -l reindex -d 'Empty the index first and rebuild it from this stream (needed to change the embedding model; give it every document)'
complete -c kts-index -l no-wait -d 'Fail at once when another writer is updating the scope, instead of waiting'
complete -c kts-index -s q -l quiet -d 'Do not print per-record errors (the summary and exit status still tell)'
complete -c kts-index -s h -l help -d 'Print help'
complete -c kts-index -s V -l version -d 'Print version'
