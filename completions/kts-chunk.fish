complete -c kts-chunk -l size -d 'Target chunk size in characters; no chunk is longer, except a short trailing fragment merged into the chunk before it' -r
complete -c kts-chunk -l overlap -d 'Most characters a chunk repeats from the end of the chunk before it (whole paragraphs or sentences that fit; none when the last is longer)' -r
complete -c kts-chunk -l min-size -d 'A trailing fragment shorter than this is merged into the chunk before it' -r
complete -c kts-chunk -l chunks-only -d 'Write only chunks: do not pass the kts.doc/1 records through'
complete -c kts-chunk -l stats -d 'Print a one-line summary on stderr at the end'
complete -c kts-chunk -s q -l quiet -d 'Do not print per-record errors and warnings (the exit status still tells)'
complete -c kts-chunk -s h -l help -d 'Print help'
complete -c kts-chunk -s V -l version -d 'Print version'
