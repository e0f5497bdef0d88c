# test-server-lib.sh — shell functions shared by prosody-test-server and ejabberd-test-server.
# Sourced, not run. Each script defines die() before sourcing this.

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Prints N (default 3) distinct free TCP ports on 127.0.0.1. The kernel chooses them (bind to port 0),
# so two runs in parallel do not collide; bash-only probing is the fallback when there is no python3.
pick_ports() {
    local count=${1:-3} py
    for py in /usr/bin/python3 python3; do
        if command -v "$py" >/dev/null 2>&1; then
            "$py" - "$count" <<'PY' && return 0
import socket, sys
count = int(sys.argv[1])
socks, ports = [], []
while len(ports) < count:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    socks.append(s)
    if port not in ports:
        ports.append(port)
for s in socks:
    s.close()
print(*ports)
PY
        fi
    done
    local ports=() p
    while [[ ${#ports[@]} -lt $count ]]; do
        p=$((20000 + RANDOM % 40000))
        if ! port_in_use "$p" && [[ " ${ports[*]} " != *" $p "* ]]; then ports+=("$p"); fi
    done
    echo "${ports[@]}"
}

# Whether PORT can be bound on ::1 (the loopback may have no IPv6, or the port may be taken there).
ipv6_loopback_usable() {
    local port=$1 py
    for py in /usr/bin/python3 python3; do
        if command -v "$py" >/dev/null 2>&1; then
            "$py" -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind(("::1", int(sys.argv[1])))
s.close()' "$port" >/dev/null 2>&1
            return
        fi
    done
    return 1
}

# A python3 that can import slixmpp (Debian's python3-slixmpp lives under /usr/bin/python3, which
# may not be the first python3 on PATH, e.g. with pyenv).
find_python() {
    local candidate
    for candidate in ${ROOST_PYTHON:-} /usr/bin/python3 python3; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import slixmpp' >/dev/null 2>&1; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

# Sends SIGNAL (default TERM) to PID and waits up to 10 s, then SIGKILL. A zombie counts as stopped.
stop_pid() {
    local pid=$1 signal=${2:-TERM} i
    kill -"$signal" "$pid" 2>/dev/null || return 0
    for ((i = 0; i < 100; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null && [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) != Z ]]; then
        echo "$(basename "$0"): pid $pid ignored SIG$signal for 10 s, sending SIGKILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        sleep 0.2
    fi
}

# Quotes a value for the env files: plain values stay unquoted, anything else is single-quoted, so
# the file is both valid shell and trivial to parse (KEY=VALUE or KEY='VALUE') from a test.
env_quote() {
    if [[ $1 =~ ^[A-Za-z0-9_./:@+,-]*$ ]]; then
        printf '%s' "$1"
    else
        printf "'%s'" "${1//\'/\'\\\'\'}"
    fi
}

# The variables both servers' env files share: connection, accounts, the peer.
# Usage: write_common_env KIND DOMAIN C2S_PORT DIRECT_TLS_PORT HTTP_PORT CA_FILE CTL PID LOG SCRIPT DIR USERS...
# Reads password_for USER from the caller.
write_common_env() {
    local kind=$1 domain=$2 c2s=$3 direct=$4 http=$5 ca=$6 ctl=$7 pid=$8 log=$9 script=${10} dir=${11}
    shift 11
    local python user upper
    python=$(find_python || true)
    echo "export ROOST_TEST_SERVER_KIND=$kind"
    echo "export ROOST_TEST_SERVER_DIR=$(env_quote "$dir")"
    echo "export ROOST_TEST_DOMAIN=$(env_quote "$domain")"
    echo "export ROOST_TEST_HOST=127.0.0.1"
    echo "export ROOST_TEST_PORT=$c2s"
    echo "export ROOST_TEST_DIRECT_TLS_PORT=$direct"
    echo "export ROOST_TEST_HTTP_PORT=$http"
    echo "export ROOST_TEST_MUC_DOMAIN=$(env_quote "conference.$domain")"
    echo "export ROOST_TEST_UPLOAD_DOMAIN=$(env_quote "upload.$domain")"
    echo "export ROOST_TEST_TLS12_DOMAIN=$(env_quote "tls12.$domain")"
    echo "export ROOST_TEST_WRONG_HOST=wronghost.test"
    echo "export ROOST_TEST_CA_FILE=$(env_quote "$ca")"
    echo "export ROOST_TEST_SERVERCTL=$(env_quote "$ctl")"
    echo "export ROOST_TEST_SERVER_PID=$pid"
    echo "export ROOST_TEST_SERVER_LOG=$(env_quote "$log")"
    echo "export ROOST_TEST_SERVER_SCRIPT=$(env_quote "$script")"
    echo "export ROOST_TEST_PEER=$(env_quote "$(dirname "$script")/xmpp-peer.py")"
    echo "export ROOST_TEST_PYTHON=$(env_quote "${python:-}")"
    echo "export ROOST_TEST_USERS=$(env_quote "$*")"
    for user in "$@"; do
        upper=$(printf '%s' "$user" | tr '[:lower:]' '[:upper:]')
        echo "export ROOST_TEST_${upper}_JID=$(env_quote "$user@$domain")"
        echo "export ROOST_TEST_${upper}_PASSWORD=$(env_quote "$(password_for "$user")")"
    done
}
