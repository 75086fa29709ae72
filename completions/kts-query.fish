complete -c kts-query -l scope -d 'In a knowledge root: ask this scope (by slug; repeatable)' -r
complete -c kts-query -l max-scopes -d 'In a knowledge root: most scopes a question may fan out to; a root of more scopes is narrowed by its catalog' -r
complete -c kts-query -l mode -r -f -a "bm25\t''
vector\t''
hybrid\t''"
complete -c kts-query -l fusion -d 'How hybrid search fuses its lists' -r -f -a "convex\t'Each list\'s scores scaled to [0, 1] over the list (its best 1, its last 0), then summed with the lists\' weights: a clear lead in one list counts, a near tie does not'
zscore\t'As convex, but each list scaled by its scores\' standard deviation instead of their range: a hit far above the rest of its list counts more than a near tie at the top of an even one'
rrf\t'Reciprocal Rank Fusion: Σ weight / (60 + rank), ranks only'"
complete -c kts-query -l top-k -d 'Number of results (at most 1000)' -r
complete -c kts-query -l candidates -d 'Chunks each retriever contributes before fusion; at least 4 × --top-k, so that enough distinct documents remain after one chunk per document' -r
complete -c kts-query -l doc-type -d 'Only documents of this type (POLICY, SOP, GUIDE, ...)' -r
complete -c kts-query -l format -r -f -a "jsonl\t'kts.hit/1 records, one per line'
text\t'Rank, score, citation and a snippet of the cited part, for humans'"
complete -c kts-query -l with -d 'Steps of the query pipeline to run besides the default ones' -r -f -a "acronyms\t'An acronym the question asks about also searches for its expansions; one the config lists, wherever it occurs'
synonyms\t'Words of the question also search for their synonyms'
filters\t'Intent words, error codes and systems become metadata filters'
decompose\t'A question with several parts is searched part by part'
step-back\t'A more general question about the question\'s main entity joins the search'
signals\t'Ranking signals after fusion (error code, intent, title, entities, density)'
graph\t'The knowledge graph\'s connectivity joins the fusion'
feedback\t'The question\'s vector moves toward its best fused chunks, and vector search runs again with it (pseudo-relevance feedback)'"
complete -c kts-query -l without -d 'Steps of the query pipeline not to run' -r -f -a "acronyms\t'An acronym the question asks about also searches for its expansions; one the config lists, wherever it occurs'
synonyms\t'Words of the question also search for their synonyms'
filters\t'Intent words, error codes and systems become metadata filters'
decompose\t'A question with several parts is searched part by part'
step-back\t'A more general question about the question\'s main entity joins the search'
signals\t'Ranking signals after fusion (error code, intent, title, entities, density)'
graph\t'The knowledge graph\'s connectivity joins the fusion'
feedback\t'The question\'s vector moves toward its best fused chunks, and vector search runs again with it (pseudo-relevance feedback)'"
complete -c kts-query -l weight -d 'Override a ranking weight (repeatable); `--explain` lists them' -r
complete -c kts-query -l min-filtered -d 'A filtered search returning fewer documents than this is joined by the unfiltered one' -r
complete -c kts-query -l rerank-cmd -d 'A command (run with sh -c) that scores the best candidates again: it reads one JSON line per candidate and prints one score per line' -r
complete -c kts-query -l rerank-model -d 'A cross-encoder that scores the best candidates again: the id of a "kind": "reranker" manifest in the models folder, or its file' -r
complete -c kts-query -l rerank-top -d 'How many of the best fused chunks the reranker scores' -r
complete -c kts-query -l rerank-weight -d 'The reranker\'s share of the final score (the fused score has the rest)' -r
complete -c kts-query -l rerank-timeout -d 'Seconds the --rerank-cmd has per question; then the fused order stands' -r
complete -c kts-query -l min-confidence -d 'Leave out hits whose confidence is below this; with none left, say so on stderr (the answer abstains)' -r
complete -c kts-query -l budget -d 'The --context\'s size, in tokens (estimated as characters / 4, a Chinese, Japanese or Korean character as one)' -r
complete -c kts-query -l model -d 'The embedding model [default: the one the index was built with]; another one is refused' -r
complete -c kts-query -l models -d 'The models folder (manifests, and cache/ filled by models/fetch) [default: the project\'s models/ found from the executable]' -r -F
complete -c kts-query -l threads -d 'Threads for embedding the question [default: the number of cores]' -r
complete -c kts-query -l evidence -d 'Check an answer (a Markdown file, or - for stdin) against the scope: kts.evidence/1 records, one per claim, then a summary' -r -F
complete -c kts-query -l min-coverage -d 'With --evidence: the share of supported claims below which the unsupported claims are searched again, and the answer flagged' -r
complete -c kts-query -l list-scopes -d 'In a knowledge root: list its scopes (kts.scope/1 records, from its catalog when it has one)'
complete -c kts-query -l count-by-scope -d 'In a knowledge root: instead of hits, one kts.scope_count/1 record per scope whose documents hold every word of the question (in how many scopes, and where)'
complete -c kts-query -l batch -d 'Read queries as JSON lines on stdin: {"id": ..., "text": ...}'
complete -c kts-query -l all-chunks -d 'Keep every matching chunk, not only the best one of each document'
complete -c kts-query -l graph -d 'Also rank by the scope\'s knowledge graph (built by kts-graph); the same as --with graph'
complete -c kts-query -l explain -d 'Write first a kts.plan/1 record: what each step of the pipeline did'
complete -c kts-query -l ledger -d 'Append a kts.ledger/1 record per query to DIR/.kts/ledger.jsonl'
complete -c kts-query -l context -d 'Print a Markdown context for an LLM (graph facts, then cited passages) instead of records'
complete -c kts-query -s q -l quiet -d 'Do not print warnings and per-query errors (the exit status still tells)'
complete -c kts-query -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kts-query -s V -l version -d 'Print version'
