# bash completion for quire(1). Installed by `make install` as
# $(PREFIX)/share/bash-completion/completions/quire; or source this file from ~/.bashrc.

_quire_limit_options="--max-entries --max-total-size --max-entry-size --max-compression-ratio --max-xml-size --max-xml-depth --max-xml-nodes --max-css-size --max-css-rules --max-css-nesting --max-image-side --max-image-pixels --max-image-buffer-pixels"

# Directories, and files whose names end in one of the extensions in $1 ("epub|pdf"; empty: any file).
_quire_files() {
    local IFS=$'\n' extglob_was_off=0
    compopt -o filenames 2>/dev/null
    if [[ -z $1 ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -d -- "$cur"))
    shopt -q extglob || { extglob_was_off=1; shopt -s extglob; }
    COMPREPLY+=($(compgen -f -X "!*.@($1|${1^^})" -- "$cur"))
    ((extglob_was_off)) && shopt -u extglob
}

_quire_directories() {
    local IFS=$'\n'
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -d -- "$cur"))
}

_quire() {
    local cur prev command i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    # `--opt=value`: bash splits the word at `=` (COMP_WORDBREAKS).
    if [[ $cur == = ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi

    # The command is the first word after `quire` that is not an option.
    command=
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} != -* ]]; then
            command=${COMP_WORDS[i]}
            break
        fi
    done
    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "info render locate view progress batch css-report profiles help" -- "$cur"))
        fi
        return
    fi

    # Values of options.
    case $prev in
        --profile)
            COMPREPLY=($(compgen -W "kindle-paperwhite kobo-clara eink-6 phone tablet" -- "$cur"))
            return ;;
        --theme)
            COMPREPLY=($(compgen -W "light sepia dark" -- "$cur"))
            return ;;
        --align)
            COMPREPLY=($(compgen -W "justify left right center start" -- "$cur"))
            return ;;
        --split)
            COMPREPLY=($(compgen -W "ltr rtl none" -- "$cur"))
            return ;;
        --spreads)
            COMPREPLY=($(compgen -W "auto none both" -- "$cur"))
            return ;;
        --flow)
            COMPREPLY=($(compgen -W "auto paginated scrolled" -- "$cur"))
            return ;;
        --writing-mode)
            COMPREPLY=($(compgen -W "auto horizontal" -- "$cur"))
            return ;;
        --rotate)
            COMPREPLY=($(compgen -W "0 90 180 270" -- "$cur"))
            return ;;
        --convention)
            COMPREPLY=($(compgen -W "readium komga" -- "$cur"))
            return ;;
        --graphics)
            COMPREPLY=($(compgen -W "kitty iterm sixel symbols symbols-256 symbols-16" -- "$cur"))
            return ;;
        --lang)
            COMPREPLY=($(compgen -W "en zh-Hans zh-Hant ja ko" -- "$cur"))
            return ;;
        --open-at)
            COMPREPLY=($(compgen -W "last" -- "$cur"))
            return ;;
        --out | --cache)
            _quire_directories
            return ;;
        --shard)
            COMPREPLY=($(compgen -W "auto" -- "$cur"))
            return ;;
        --profiles | --json-log)
            _quire_files ""
            return ;;
        --book)
            _quire_files "epub"
            return ;;
        --from)
            _quire_files "json"
            return ;;
        --user-css)
            _quire_files "css"
            return ;;
        --stats | --image-sizes)
            _quire_files ""
            return ;;
        --locator)
            # JSON, or @FILE.
            if [[ $cur == @* ]]; then
                local IFS=$'\n'
                COMPREPLY=($(compgen -f -P @ -- "${cur#@}"))
                compopt -o filenames 2>/dev/null
            fi
            return ;;
        --size | --dpi | --font-size | --margin | --line-height | --font | --jobs | --pages | --password | \
            --page | --cfi | --xpointer | --search | --record-after | --cell | --cols | --rows | --progression | --total-progression | --position | --label | --toc | \
            --shard-count | --cache-size | \
            --max-entries | --max-total-size | --max-entry-size | --max-compression-ratio | --max-xml-size | --max-xml-depth | --max-xml-nodes | --max-css-size | --max-css-rules | --max-css-nesting | --max-image-side | --max-image-pixels | --max-image-buffer-pixels | --timeout)
            return ;;
    esac

    local options
    case $command in
        info) options="--json --password --timeout $_quire_limit_options" ;;
        render)
            options="--out --profile --size --dpi --font-size --margin --line-height --font --align --theme
                --gray --dither --jobs --pages --no-hyphenation --no-publisher-styles --user-css --map-only
                --force --stats --image-sizes --open-at --quiet --password --rotate --crop --split --spreads --flow --writing-mode --timeout $_quire_limit_options" ;;
        locate)
            options="--json --book --page --from --locator --cfi --xpointer --progression --total-progression
                --position --convention --label --toc --timeout $_quire_limit_options" ;;
        css-report) options="--json --timeout $_quire_limit_options" ;;
        view)
            options="--graphics --cell --cols --rows --page --locator --cfi --search --book --profile --size --dark --lang
                --once --resume --no-resume --record-after --writing-mode" ;;
        progress) options="--json" ;;
        batch)
            options="--out --profile --profiles --theme --gray --dither --map-only --jobs --shard --shard-count
                --json-log --cache --cache-size --no-cache --quiet $_quire_limit_options" ;;
        *) return ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options" -- "$cur"))
        return
    fi
    case $command in
        info | render | view | progress) _quire_files "epub|pdf" ;;
        batch) _quire_files "epub|pdf" ; compopt -o dirnames 2>/dev/null ;;
        css-report) _quire_files "epub" ;;
        locate) _quire_files "json" ;;
    esac
}

complete -F _quire quire
