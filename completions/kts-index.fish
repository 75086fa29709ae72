complete -c kts-index -l batch -d 'Commit after this many documents (or after a second); --reindex commits once, at the end' -r
complete -c kts-index -l reindex -d 'Rebuild the index from this stream alone (needed to change the embedding model; give it every document), in one transaction: readers keep the old index until the stream ends, and a killed run leaves it'
complete -c kts-index -l no-wait -d 'Fail at once when another writer is updating the scope, instead of waiting'
complete -c kts-index -s q -l quiet -d 'Do not print per-record errors (the summary and exit status still tell)'
complete -c kts-index -s h -l help -d 'Print help'
complete -c kts-index -s V -l version -d 'Print version'
