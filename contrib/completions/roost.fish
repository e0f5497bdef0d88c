# fish completion for roost(1). Install: copy to ~/.config/fish/completions/roost.fish
# Accounts come from the config file; contacts from `roost roster --cached --json` (the archive only).

function __roost_config_file
    set -l tokens (commandline -opc)
    set -l i (contains -i -- --config $tokens)
    and echo $tokens[(math $i + 1)]
    and return
    if set -q ROOST_CONFIG
        echo $ROOST_CONFIG
    else if set -q XDG_CONFIG_HOME
        echo $XDG_CONFIG_HOME/roost/config.ini
    else
        echo $HOME/.config/roost/config.ini
    end
end

function __roost_accounts
    set -l file (__roost_config_file)
    test -r $file; and sed -n 's/^[[:space:]]*\[account[[:space:]]\{1,\}\([^]]*\)\].*/\1/p' $file
end

function __roost_contacts
    roost roster --cached --json --config (__roost_config_file) 2>/dev/null | sed -n 's/.*"jid":"\([^"]*\)".*/\1/p'
end

function __roost_rooms
    roost rooms --json --config (__roost_config_file) 2>/dev/null | sed -n 's/.*"room":"\([^"]*\)".*/\1/p'
end

set -l commands run search log stats verify config status roster requests rooms send omemo vcard presence register passwd unregister export import files serve notify help
complete -c roost -f
complete -c roost -n "not __fish_seen_subcommand_from $commands" -a "$commands"

complete -c roost -l config -r -F -d 'config file'
complete -c roost -l account -x -a '(__roost_accounts)' -d 'act on this account only'
complete -c roost -l json -d 'JSON Lines output'
complete -c roost -s v -l verbose -d 'log more'
complete -c roost -s q -l quiet -d 'log errors only'
complete -c roost -l log-level -x -a 'error warning info debug'
complete -c roost -s h -l help -d 'show help'
complete -c roost -l version -d 'show the version'

complete -c roost -n '__fish_seen_subcommand_from search' -l oldest-first
complete -c roost -n '__fish_seen_subcommand_from search' -l rank
complete -c roost -n '__fish_seen_subcommand_from search presence' -s n -l limit -x
complete -c roost -n '__fish_seen_subcommand_from search' -l offset -x
complete -c roost -n '__fish_seen_subcommand_from log' -l states
complete -c roost -n '__fish_seen_subcommand_from log' -l presence
complete -c roost -n '__fish_seen_subcommand_from config' -l check-passwords
complete -c roost -n '__fish_seen_subcommand_from log send presence' -a '(__roost_contacts)'
complete -c roost -n '__fish_seen_subcommand_from log send' -a '(__roost_rooms)'

complete -c roost -n '__fish_seen_subcommand_from rooms; and not __fish_seen_subcommand_from join leave invites decline' -a 'join leave invites decline'
complete -c roost -n '__fish_seen_subcommand_from rooms; and __fish_seen_subcommand_from join leave decline' -a '(__roost_rooms)'
complete -c roost -n '__fish_seen_subcommand_from rooms' -l nick -x -d 'join: the nick in the room'
complete -c roost -n '__fish_seen_subcommand_from rooms' -l password-command -x -d 'join: command printing the room password'
complete -c roost -n '__fish_seen_subcommand_from rooms' -l bookmark -d 'join: also bookmark with autojoin'
complete -c roost -n '__fish_seen_subcommand_from rooms' -l all -d 'invites: answered ones too'

complete -c roost -n '__fish_seen_subcommand_from roster; and not __fish_seen_subcommand_from add remove rename group' -a 'add remove rename group'
complete -c roost -n '__fish_seen_subcommand_from roster; and __fish_seen_subcommand_from remove rename group' -a '(__roost_contacts)'
complete -c roost -n '__fish_seen_subcommand_from roster' -l name -x
complete -c roost -n '__fish_seen_subcommand_from roster' -l group -x
complete -c roost -n '__fish_seen_subcommand_from roster' -l message -x
complete -c roost -n '__fish_seen_subcommand_from roster' -l cached

complete -c roost -n '__fish_seen_subcommand_from requests; and not __fish_seen_subcommand_from accept deny' -a 'accept deny'
complete -c roost -n '__fish_seen_subcommand_from requests; and __fish_seen_subcommand_from accept deny' -a '(__roost_contacts)'
complete -c roost -n '__fish_seen_subcommand_from requests' -l add

complete -c roost -n '__fish_seen_subcommand_from send' -l plaintext
complete -c roost -n '__fish_seen_subcommand_from omemo; and not __fish_seen_subcommand_from fingerprints trust distrust retry' -a 'fingerprints trust distrust retry'
complete -c roost -n '__fish_seen_subcommand_from omemo; and __fish_seen_subcommand_from fingerprints trust distrust' -a '(__roost_contacts)'

complete -c roost -n '__fish_seen_subcommand_from vcard; and not __fish_seen_subcommand_from show set' -a 'show set'
complete -c roost -n '__fish_seen_subcommand_from vcard; and __fish_seen_subcommand_from show' -a '(__roost_contacts)'
complete -c roost -n '__fish_seen_subcommand_from vcard' -l refresh
complete -c roost -n '__fish_seen_subcommand_from vcard register' -l nickname -x
complete -c roost -n '__fish_seen_subcommand_from vcard register' -l fullname -x
complete -c roost -n '__fish_seen_subcommand_from vcard register' -l photo -r -F
complete -c roost -n '__fish_seen_subcommand_from vcard' -l no-photo

complete -c roost -n '__fish_seen_subcommand_from register passwd' -l password-command -x
complete -c roost -n '__fish_seen_subcommand_from register' -l host -x
complete -c roost -n '__fish_seen_subcommand_from register' -l port -x
complete -c roost -n '__fish_seen_subcommand_from register' -l tls -x -a 'starttls direct'
complete -c roost -n '__fish_seen_subcommand_from register' -l ca-file -r -F
complete -c roost -n '__fish_seen_subcommand_from unregister' -s y -l yes
complete -c roost -n '__fish_seen_subcommand_from help' -a "$commands"
complete -c roost -n '__fish_seen_subcommand_from verify' -l repair -d 'archive the messages missing locally'

complete -c roost -n '__fish_seen_subcommand_from import' -s f -l format -x -a 'auto jsonl gajim dino profanity pidgin' -d 'what PATH holds'
complete -c roost -n '__fish_seen_subcommand_from import' -s n -l dry-run -d 'report, change nothing'
complete -c roost -n '__fish_seen_subcommand_from import' -l skip-invalid -d 'jsonl: import the valid lines'
complete -c roost -n '__fish_seen_subcommand_from import' -l me -x -d 'a name you appear under in Pidgin text logs'
complete -c roost -n '__fish_seen_subcommand_from import' -l time-zone -x -d 'zone of times without an offset'
complete -c roost -n '__fish_seen_subcommand_from import' -F

complete -c roost -n '__fish_seen_subcommand_from verify' -l files -d 'only check the stored files\' hashes'
complete -c roost -n '__fish_seen_subcommand_from send' -l file -r -F -d 'upload and send this file'
complete -c roost -n '__fish_seen_subcommand_from files; and not __fish_seen_subcommand_from fetch' -a fetch -d 'download missing files'
complete -c roost -n '__fish_seen_subcommand_from files' -l state -x -a 'stored pending too-large failed refused'
complete -c roost -n '__fish_seen_subcommand_from files' -s n -l limit -x
complete -c roost -n '__fish_seen_subcommand_from files' -l retry-failed -d 'also retry failed downloads'
complete -c roost -n '__fish_seen_subcommand_from export' -l max-attachment-size -x -d 'mbox, maildir: embed files up to SIZE'
complete -c roost -n '__fish_seen_subcommand_from serve' -s p -l port -x -d 'port (0: any free one)'
complete -c roost -n '__fish_seen_subcommand_from serve' -l open -d 'open it in the browser'
complete -c roost -n '__fish_seen_subcommand_from serve' -l listen -x -d 'IP address to listen on'
complete -c roost -n '__fish_seen_subcommand_from serve' -l allow-remote -d 'allow a non-loopback --listen'
complete -c roost -n '__fish_seen_subcommand_from serve' -l allow-host -x -d 'accept this host name'
complete -c roost -n '__fish_seen_subcommand_from serve' -l utc -d 'times in UTC'
