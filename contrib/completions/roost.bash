# bash completion for roost(1). Install: copy to ~/.local/share/bash-completion/completions/roost
# Accounts come from the config file; contacts from `roost roster --cached --json` (the archive only, so
# pressing TAB never logs in to a server).

_roost_config_file() {
    local i
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        if [[ ${COMP_WORDS[i]} == --config ]]; then
            printf '%s\n' "${COMP_WORDS[i+1]/#\~/$HOME}"
            return
        fi
    done
    printf '%s\n' "${ROOST_CONFIG:-${XDG_CONFIG_HOME:-$HOME/.config}/roost/config.ini}"
}

_roost_accounts() {
    local file
    file=$(_roost_config_file)
    [[ -r $file ]] && sed -n 's/^[[:space:]]*\[account[[:space:]]\{1,\}\([^]]*\)\].*/\1/p' "$file"
}

_roost_contacts() {
    local file
    file=$(_roost_config_file)
    roost roster --cached --json --config "$file" 2>/dev/null | sed -n 's/.*"jid":"\([^"]*\)".*/\1/p'
}

_roost_rooms() {
    local file
    file=$(_roost_config_file)
    roost rooms --json --config "$file" 2>/dev/null | sed -n 's/.*"room":"\([^"]*\)".*/\1/p'
}

_roost() {
    local cur prev command i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    local commands="run search log stats verify config status roster requests rooms send omemo vcard presence register passwd unregister export import files serve notify help"
    local global="--config --account --json --verbose --quiet --log-level --help --version"

    case $prev in
        --config|--photo|--ca-file|--file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --state) COMPREPLY=($(compgen -W "stored pending too-large failed refused" -- "$cur")); return ;;
        --account) COMPREPLY=($(compgen -W "$(_roost_accounts)" -- "$cur")); return ;;
        --log-level) COMPREPLY=($(compgen -W "error warning info debug" -- "$cur")); return ;;
        --tls) COMPREPLY=($(compgen -W "starttls direct" -- "$cur")); return ;;
        # export's formats and import's sources
        --format|-f) COMPREPLY=($(compgen -W "jsonl txt md html mbox maildir csv auto gajim dino profanity pidgin" -- "$cur")); return ;;
        --time-zone) COMPREPLY=($(compgen -W "UTC $(cd /usr/share/zoneinfo 2>/dev/null && find . -type f -name '[A-Z]*' | sed 's|^\./||')" -- "$cur")); return ;;
        --me) return ;;
        --listen|--allow-host) return ;;
        --name|--group|--message|--nickname|--fullname|--password-command|--host|--port|--limit|-n|--offset|--max-attachment-size|--nick) return ;;
    esac

    # The command is the first word that is not an option or an option's value.
    local words=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --config|--account|--log-level|--name|--group|--message|--nickname|--fullname|--photo|--password-command|--host|--port|--tls|--ca-file|--limit|--offset|--format|-f|--time-zone|--me|--listen|--allow-host|--file|--state|--output|-o|--split|--include|--max-attachment-size|--nick) ((i++)) ;;
            -n) [[ ${words[0]} != import ]] && ((i++)) ;;
            -*) ;;
            *) words+=("${COMP_WORDS[i]}") ;;
        esac
    done
    command=${words[0]}

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$global" -- "$cur")); else COMPREPLY=($(compgen -W "$commands" -- "$cur")); fi
        return
    fi

    local options="" arguments=""
    case $command in
        search) options="--oldest-first --rank --limit --offset" ;;
        verify) options="--repair --files" ;;
        files) options="--state --limit --retry-failed"; [[ ${#words[@]} == 1 ]] && arguments="fetch" ;;
        export) options="--format --output --split --include --utc --force --no-attachments --max-attachment-size" ;;
        log) options="--states --presence"; arguments="$(_roost_contacts) $(_roost_rooms)" ;;
        rooms)
            options="--nick --password-command --bookmark --all"
            case ${#words[@]} in
                1) arguments="join leave invites decline" ;;
                2) [[ ${words[1]} != invites ]] && arguments=$(_roost_rooms) ;;
            esac ;;
        config) options="--check-passwords" ;;
        roster)
            options="--name --group --message --cached"
            case ${#words[@]} in
                1) arguments="add remove rename group" ;;
                2) [[ ${words[1]} != add ]] && arguments=$(_roost_contacts) ;;
            esac ;;
        requests)
            options="--add"
            case ${#words[@]} in
                1) arguments="accept deny" ;;
                2) arguments=$(_roost_contacts) ;;
            esac ;;
        send) options="--plaintext --file"; [[ ${#words[@]} == 1 ]] && arguments="$(_roost_contacts) $(_roost_rooms)" ;;
        omemo)
            case ${#words[@]} in
                1) arguments="fingerprints trust distrust retry" ;;
                2) [[ ${words[1]} != retry ]] && arguments=$(_roost_contacts) ;;
            esac ;;
        vcard)
            options="--refresh --nickname --fullname --photo --no-photo"
            case ${#words[@]} in
                1) arguments="show set" ;;
                2) [[ ${words[1]} == show ]] && arguments=$(_roost_contacts) ;;
            esac ;;
        presence) options="--limit"; [[ ${#words[@]} == 1 ]] && arguments=$(_roost_contacts) ;;
        register) options="--password-command --nickname --fullname --photo --host --port --tls --ca-file" ;;
        passwd) options="--password-command" ;;
        unregister) options="--yes" ;;
        help) [[ ${#words[@]} == 1 ]] && arguments=$commands ;;
        import) options="--format --dry-run --skip-invalid --me --time-zone" ;;
        serve) options="--port --open --listen --allow-remote --allow-host --utc" ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options $global" -- "$cur"))
    elif [[ $command == import ]]; then
        COMPREPLY=($(compgen -f -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$arguments" -- "$cur"))
    fi
}

complete -F _roost roost
