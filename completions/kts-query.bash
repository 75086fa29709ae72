_kts__query() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="kts__query"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kts__query)
            opts="-q -h -V --list-scopes --scope --count-by-scope --max-scopes --batch --mode --fusion --top-k --candidates --all-chunks --doc-type --format --graph --with --without --weight --min-filtered --rerank-cmd --rerank-model --rerank-top --rerank-weight --rerank-timeout --explain --min-confidence --ledger --context --budget --model --models --threads --quiet --evidence --min-coverage --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --scope)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-scopes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --mode)
                    COMPREPLY=($(compgen -W "bm25 vector hybrid" -- "${cur}"))
                    return 0
                    ;;
                --fusion)
                    COMPREPLY=($(compgen -W "convex zscore rrf" -- "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --candidates)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --doc-type)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "jsonl text" -- "${cur}"))
                    return 0
                    ;;
                --with)
                    COMPREPLY=($(compgen -W "acronyms synonyms filters decompose step-back signals graph feedback" -- "${cur}"))
                    return 0
                    ;;
                --without)
                    COMPREPLY=($(compgen -W "acronyms synonyms filters decompose step-back signals graph feedback" -- "${cur}"))
                    return 0
                    ;;
                --weight)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-filtered)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rerank-cmd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rerank-model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rerank-top)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rerank-weight)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rerank-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-confidence)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --budget)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --model)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --models)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --evidence)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --min-coverage)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _kts__query -o nosort -o bashdefault -o default kts-query
else
    complete -F _kts__query -o bashdefault -o default kts-query
fi
