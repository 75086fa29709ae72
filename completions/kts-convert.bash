_kts__convert() {
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
                cmd="kts__convert"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kts__convert)
            opts="-j -q -h -V --root --threads --timeout --max-markdown-mib --max-unpacked-mib --max-pages --max-cells --ocr --ocr-languages --ocr-timeout --max-megapixels --tesseract --pdftoppm --describe-images --describe-timeout --no-store --fail-fast --stats --quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -j)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-markdown-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-unpacked-mib)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-pages)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-cells)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ocr)
                    COMPREPLY=($(compgen -W "auto always never" -- "${cur}"))
                    return 0
                    ;;
                --ocr-languages)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ocr-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-megapixels)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tesseract)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --pdftoppm)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --describe-images)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --describe-timeout)
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
    complete -F _kts__convert -o nosort -o bashdefault -o default kts-convert
else
    complete -F _kts__convert -o bashdefault -o default kts-convert
fi
