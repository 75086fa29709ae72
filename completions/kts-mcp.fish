complete -c kts-mcp -l http -d 'Serve the streamable HTTP transport at http://ADDR:PORT/mcp instead of stdio. ADDR is an IP address or a host name (localhost is 127.0.0.1)' -r
complete -c kts-mcp -l token -d 'The bearer token HTTP clients must send (Authorization: Bearer TOKEN)' -r
complete -c kts-mcp -l timeout -d 'Time limit of one request, in seconds (at most 86400, a day)' -r
complete -c kts-mcp -l concurrency -d 'Requests answered at the same time; more wait their turn [default: twice the number of cores]' -r
complete -c kts-mcp -l models -d 'The models folder (manifests, and cache/ filled by models/fetch) [default: the project\'s models/ found from the executable]' -r -F
complete -c kts-mcp -l threads -d 'Threads for embedding a question [default: the number of cores]' -r
complete -c kts-mcp -l allow-remote -d 'Let --http listen on an address other than loopback (requires --token)'
complete -c kts-mcp -s q -l quiet -d 'Do not log requests and warnings'
complete -c kts-mcp -s h -l help -d 'Print help'
complete -c kts-mcp -s V -l version -d 'Print version'
