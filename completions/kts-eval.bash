_kts__eval() {
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
                cmd="kts__eval"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kts__eval)
            opts="-h -V --split --modes --work --keep --top-k --queries --json --reindex --any-build --chunk-size --chunk-overlap --steps --fit-confidence --query-arg --embed-arg --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --split)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --modes)
                    COMPREPLY=($(compgen -W "bm25 vector hybrid" -- "${cur}"))
                    return 0
                    ;;
                --work)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --top-k)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --queries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --json)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-size)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --chunk-overlap)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --query-arg)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --embed-arg)
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
    complete -F _kts__eval -o nosort -o bashdefault -o default kts-eval
else
    complete -F _kts__eval -o bashdefault -o default kts-eval
fi
