complete -c kts-embed -l model -d 'The model: a manifest id in the models folder [default: the model each scope\'s index was built with; for a new scope, and --query, all-minilm-l6-v2-q8]' -r
complete -c kts-embed -l models -d 'The models folder (manifests, and cache/ filled by models/fetch) [default: the project\'s models/ found from the executable]' -r -F
complete -c kts-embed -l threads -d 'Threads inside one model run [default: the number of cores]' -r
complete -c kts-embed -l batch -d 'Texts per model run; above 1, texts of similar length are batched together: faster on several cores, but with a model computing in int8 a text\'s vector then depends a little on its batch (the activations are quantised per run; cosine 0.986 at worst, 0.996 typically)' -r
complete -c kts-embed -l cache -d 'Keep the vector cache in DIR/embeddings/, never pruned [default: the scope\'s .kts/ folder, from the `root` of the kts.doc/1 records; none without one]' -r -F
complete -c kts-embed -l query -d 'Print the embedding of TEXT as a search query (one kts.query_embedding/1 record), and exit' -r
complete -c kts-embed -l no-cache -d 'Keep no vector cache on disk'
complete -c kts-embed -l stats -d 'Print a one-line summary on stderr at the end'
complete -c kts-embed -s q -l quiet -d 'Do not print per-record errors and warnings (the exit status still tells)'
complete -c kts-embed -s h -l help -d 'Print help'
complete -c kts-embed -s V -l version -d 'Print version'
