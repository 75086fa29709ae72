complete -c kts-sample -s h -l help -d 'Print help'
complete -c kts-sample -s V -l version -d 'Print version'
