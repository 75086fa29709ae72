complete -c kts-query -l mode -r -f -a "bm25\t''
vector\t''
hybrid\t''"
complete -c kts-query -l top-k -d 'Number of results' -r
complete -c kts-query -l candidates -d 'Chunks each retriever contributes before fusion; at least 4 × --top-k, so that enough distinct documents remain after one chunk per document' -r
complete -c kts-query -l doc-type -d 'Only documents of this type (POLICY, SOP, GUIDE, ...)' -r
complete -c kts-query -l format -r -f -a "jsonl\t'kts.hit/1 records, one per line'
text\t'Rank, score, citation and a snippet, for humans'"
complete -c kts-query -l graph-weight -d 'The graph list\'s weight in the fusion (the retrievers\' lists weigh 1)' -r
complete -c kts-query -l budget -d 'The --context\'s size, in tokens (estimated as characters / 4)' -r
complete -c kts-query -l model -d 'The embedding model [default: the one the index was built with]; another one is refused' -r
complete -c kts-query -l models -d 'The models folder (manifests, and cache/ filled by models/fetch) [default: the project\'s models/ found from the executable]' -r -F
complete -c kts-query -l threads -d 'Threads for embedding the question [default: the number of cores]' -r
complete -c kts-query -l batch -d 'Read queries as JSON lines on stdin: {"id": ..., "text": ...}'
complete -c kts-query -l all-chunks -d 'Keep every matching chunk, not only the best one of each document'
complete -c kts-query -l graph -d 'Also rank by the scope\'s knowledge graph (built by kts-graph)'
complete -c kts-query -l context -d 'Print a Markdown context for an LLM (graph facts, then cited passages) instead of records'
complete -c kts-query -s q -l quiet -d 'Do not print warnings and per-query errors (the exit status still tells)'
complete -c kts-query -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kts-query -s V -l version -d 'Print version'
