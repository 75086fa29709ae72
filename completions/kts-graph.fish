# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_kts_graph_global_optspecs
    string join \n export= config= min-mentions= edge-threshold= seed= taxonomy= no-wait stats q/quiet h/help V/version
end

function __fish_kts_graph_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_kts_graph_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_kts_graph_using_subcommand
    set -l cmd (__fish_kts_graph_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c kts-graph -n "__fish_kts_graph_needs_command" -l export -d 'After updating the graph, print it whole on stdout in this form' -r -f -a "node-link\t'Node-link JSON: {"nodes": [...], "links": [...]}, as NetworkX reads it'"
complete -c kts-graph -n "__fish_kts_graph_needs_command" -l config -d 'Read the settings from this file instead of DIR/.kts/config.toml' -r -F
complete -c kts-graph -n "__fish_kts_graph_needs_command" -l min-mentions -d 'Leave out entities mentioned fewer times in the scope (seeds, defined terms and the concepts kept acronyms are spelled out as excepted)' -r
complete -c kts-graph -n "__fish_kts_graph_needs_command" -l edge-threshold -d 'Do not follow edges lighter than this (weights are in (0, 1])' -r
complete -c kts-graph -n "__fish_kts_graph_needs_command" -l seed -d 'An entity to extract wherever its name occurs, as KIND:NAME (e.g. PERSON:Jane Doe); repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_needs_command" -l taxonomy -d 'A system or tool name to extract as SYSTEM wherever it occurs; repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_needs_command" -l no-wait -d 'Fail at once when another writer is updating the scope, instead of waiting'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -l stats -d 'Also print the graph\'s size (nodes and edges by kind) on stderr'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -s q -l quiet -d 'Print no summary or warnings on stderr, only errors'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -s V -l version -d 'Print version'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -a "related" -d 'Documents related to the document at PATH (relative to DIR)'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -a "neighbors" -d 'Entities and documents near ENTITY (a name, or a node id like system:authservice)'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -a "central" -d 'The most connected entities and topics (degree centrality)'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -a "entities" -d 'The entities, most mentioned first'
complete -c kts-graph -n "__fish_kts_graph_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand related" -l top -d 'Documents to list, 1 or more' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand related" -l config -d 'Read the settings from this file instead of DIR/.kts/config.toml' -r -F
complete -c kts-graph -n "__fish_kts_graph_using_subcommand related" -l min-mentions -d 'Leave out entities mentioned fewer times in the scope (seeds, defined terms and the concepts kept acronyms are spelled out as excepted)' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand related" -l edge-threshold -d 'Do not follow edges lighter than this (weights are in (0, 1])' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand related" -l seed -d 'An entity to extract wherever its name occurs, as KIND:NAME (e.g. PERSON:Jane Doe); repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand related" -l taxonomy -d 'A system or tool name to extract as SYSTEM wherever it occurs; repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand related" -s h -l help -d 'Print help'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand neighbors" -l hops -d 'Edges to walk, 1 or more [default: the depth setting, 2]' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand neighbors" -l top -d 'Nodes to list, 1 or more' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand neighbors" -l config -d 'Read the settings from this file instead of DIR/.kts/config.toml' -r -F
complete -c kts-graph -n "__fish_kts_graph_using_subcommand neighbors" -l min-mentions -d 'Leave out entities mentioned fewer times in the scope (seeds, defined terms and the concepts kept acronyms are spelled out as excepted)' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand neighbors" -l edge-threshold -d 'Do not follow edges lighter than this (weights are in (0, 1])' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand neighbors" -l seed -d 'An entity to extract wherever its name occurs, as KIND:NAME (e.g. PERSON:Jane Doe); repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand neighbors" -l taxonomy -d 'A system or tool name to extract as SYSTEM wherever it occurs; repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand neighbors" -s h -l help -d 'Print help'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand central" -l top -d 'Entities and topics to list, 1 or more' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand central" -l config -d 'Read the settings from this file instead of DIR/.kts/config.toml' -r -F
complete -c kts-graph -n "__fish_kts_graph_using_subcommand central" -l min-mentions -d 'Leave out entities mentioned fewer times in the scope (seeds, defined terms and the concepts kept acronyms are spelled out as excepted)' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand central" -l edge-threshold -d 'Do not follow edges lighter than this (weights are in (0, 1])' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand central" -l seed -d 'An entity to extract wherever its name occurs, as KIND:NAME (e.g. PERSON:Jane Doe); repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand central" -l taxonomy -d 'A system or tool name to extract as SYSTEM wherever it occurs; repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand central" -s h -l help -d 'Print help'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand entities" -l kind -d 'Only entities of this kind (TERM, SYSTEM, CONCEPT, ACRONYM, ERROR_CODE, PERSON), or the keyword topics (TOPIC)' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand entities" -l config -d 'Read the settings from this file instead of DIR/.kts/config.toml' -r -F
complete -c kts-graph -n "__fish_kts_graph_using_subcommand entities" -l min-mentions -d 'Leave out entities mentioned fewer times in the scope (seeds, defined terms and the concepts kept acronyms are spelled out as excepted)' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand entities" -l edge-threshold -d 'Do not follow edges lighter than this (weights are in (0, 1])' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand entities" -l seed -d 'An entity to extract wherever its name occurs, as KIND:NAME (e.g. PERSON:Jane Doe); repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand entities" -l taxonomy -d 'A system or tool name to extract as SYSTEM wherever it occurs; repeatable' -r
complete -c kts-graph -n "__fish_kts_graph_using_subcommand entities" -s h -l help -d 'Print help'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand help; and not __fish_seen_subcommand_from related neighbors central entities help" -f -a "related" -d 'Documents related to the document at PATH (relative to DIR)'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand help; and not __fish_seen_subcommand_from related neighbors central entities help" -f -a "neighbors" -d 'Entities and documents near ENTITY (a name, or a node id like system:authservice)'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand help; and not __fish_seen_subcommand_from related neighbors central entities help" -f -a "central" -d 'The most connected entities and topics (degree centrality)'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand help; and not __fish_seen_subcommand_from related neighbors central entities help" -f -a "entities" -d 'The entities, most mentioned first'
complete -c kts-graph -n "__fish_kts_graph_using_subcommand help; and not __fish_seen_subcommand_from related neighbors central entities help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
