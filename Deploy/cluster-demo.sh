#!/usr/bin/env bash
# A relay cluster on loopback (`make cluster-demo`): three nats-servers with JetStream from
# Deploy/nats-server-N.conf, two rchat-relay nodes sharing one key file, and haproxy from
# Deploy/haproxy.cfg as a round-robin TCP balancer in front. The configurations are the
# operator's, with hosts, ports and directories rewritten for one machine.
#
# usage: Deploy/cluster-demo.sh [RCHAT_RELAY]   (default: .build/release/rchat-relay)
# Prints on stdout one line, `relay ADDRESS`, as rchat-relay prints it, pointing at the
# balancer; what runs where goes to stderr. Ctrl-C (or SIGTERM) stops everything it started,
# by PID, and removes its temporary folder. If one of them stops by itself, so does the rest.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
relay=${1:-$here/../.build/release/rchat-relay}
PATH=$PATH:/usr/sbin:/sbin

say() { echo "cluster-demo: $*" >&2; }
for tool in nats-server haproxy; do
    command -v "$tool" >/dev/null || { say "$tool is not installed; run: sudo apt-get install -y nats-server haproxy"; exit 2; }
done
[[ -x $relay ]] || { say "no rchat-relay at $relay; run: swift build -c release"; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/rchat-cluster-demo.XXXXXX")   # mode 0700
pids=()
names=()
stopping=0
stop() {
    ((stopping)) && return
    stopping=1
    local i
    # Last started first, each waited for: the balancer, then the nodes while NATS is still
    # there for them to leave cleanly (a node cut off from NATS takes seconds to stop), then
    # the NATS servers.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        kill -TERM "${pids[i]}" 2>/dev/null || true
        wait "${pids[i]}" 2>/dev/null || true
    done
    rm -rf "$dir"
}
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM
trap stop EXIT

start() {  # NAME COMMAND...: runs it in the background, its output in $dir/NAME.{out,log}
    local name=$1; shift
    "$@" >"$dir/$name.out" 2>"$dir/$name.log" &
    pids+=($!)
    names+=("$name")
}

# Polls COMMAND every 0.1 s for at most 30 s; fails if the last process started exits.
await() {
    local what=$1; shift
    for _ in $(seq 300); do
        "$@" && return 0
        kill -0 "${pids[-1]}" 2>/dev/null || { say "${names[-1]} stopped while starting (see below)"; tail -n 5 "$dir/${names[-1]}.log" >&2; exit 1; }
        sleep 0.1
    done
    say "$what within 30 s: giving up"
    exit 1
}

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A loopback port nothing listens on, not handed out before by this script, and below the
# kernel's range for outgoing connections' own ports (one of those, or a port 0 that another
# program bound meanwhile, would take it between this check and the bind).
used=" "
read -r ephemeral _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || ephemeral=32768
((ephemeral > 12000)) || ephemeral=61000
free_port() {  # VARIABLE
    local candidate
    while :; do
        candidate=$((10000 + (RANDOM * 32768 + RANDOM) % (ephemeral - 10000)))
        [[ $used == *" $candidate "* ]] && continue
        if ! listening "$candidate"; then used+="$candidate "; printf -v "$1" %s "$candidate"; return; fi
    done
}

# Three nats-servers: each configuration rewritten to loopback ports and a store in $dir.
declare -a client route
for i in 1 2 3; do free_port "client[$i]"; free_port "route[$i]"; done
urls=""
for i in 1 2 3; do
    conf=$dir/nats-server-$i.conf
    sed -e "s|^listen: 0\.0\.0\.0:4222\$|listen: 127.0.0.1:${client[i]}|" \
        -e "s|^  listen: 0\.0\.0\.0:6222\$|  listen: 127.0.0.1:${route[i]}|" \
        -e "s|^  store_dir: .*|  store_dir: \"$dir/nats-$i\"|" \
        -e "s|nats-route://nats-1\.example\.org:6222|nats-route://127.0.0.1:${route[1]}|" \
        -e "s|nats-route://nats-2\.example\.org:6222|nats-route://127.0.0.1:${route[2]}|" \
        -e "s|nats-route://nats-3\.example\.org:6222|nats-route://127.0.0.1:${route[3]}|" \
        "$here/nats-server-$i.conf" >"$conf"
    if grep -q -e example.org -e 0.0.0.0 -e /var/lib "$conf"; then
        say "Deploy/nats-server-$i.conf no longer has the lines this script rewrites (listen, store_dir, routes)"
        exit 1
    fi
    start "nats-$i" nats-server -c "$conf"
    urls+="${urls:+,}nats://127.0.0.1:${client[i]}"
done
for i in 1 2 3; do
    await "nats-$i saw no JetStream leader elected" grep -qs "metadata leader" "$dir/nats-$i.log"
done

# Two relay nodes, one after the other: the first writes the key file the second reads.
# A node that exits at start (JetStream, just elected, may not take its stream yet) is
# started again, for up to 20 s.
declare -a node
for i in 1 2; do
    for attempt in $(seq 40); do
        start "relay-$i" "$relay" --listen 127.0.0.1:0 --key-file "$dir/relay.key" --cluster "$urls" \
            --max-connections-per-address 10000
        for _ in $(seq 300); do
            grep -qs '^relay ' "$dir/relay-$i.out" && break 2
            kill -0 "${pids[-1]}" 2>/dev/null || break
            sleep 0.1
        done
        kill -TERM "${pids[-1]}" 2>/dev/null || true
        wait "${pids[-1]}" || true
        unset 'pids[-1]' 'names[-1]'
        ((attempt < 40)) || { say "relay node $i did not start:"; tail -n 5 "$dir/relay-$i.log" >&2; exit 1; }
        sleep 0.5
    done
    line=$(grep -m 1 '^relay ' "$dir/relay-$i.out")
    hostport=${line#relay }
    node[i]=${hostport%%/*}
    key=${line##*/}
done

# haproxy: the operator's file without what needs root (chroot, user, syslog, more file
# descriptors than a user may open).
free_port port
sed -e '/^ *chroot /d' -e 's/^ *maxconn .*/    maxconn 1000/' -e '/^ *user /d' -e '/^ *group /d' -e '/^ *log \/dev\/log/d' \
    -e "s|^ *bind :7070\$|    bind 127.0.0.1:$port|" \
    -e "s|relay-1\.example\.org:7070|${node[1]}|" -e "s|relay-2\.example\.org:7070|${node[2]}|" \
    "$here/haproxy.cfg" >"$dir/haproxy.cfg"
if grep -q -e example.org -e 'bind :' "$dir/haproxy.cfg"; then
    say "Deploy/haproxy.cfg no longer has the lines this script rewrites (bind, server)"
    exit 1
fi
start haproxy haproxy -db -f "$dir/haproxy.cfg"
await "haproxy did not listen" listening "$port"

say "3 nats-servers (JetStream) on 127.0.0.1:${client[1]}, :${client[2]}, :${client[3]};" \
    "relay nodes on ${node[1]} and ${node[2]}; haproxy (round robin) on 127.0.0.1:$port; files in $dir"
say "clients use the ADDRESS below (rchat init --name NAME --relay ADDRESS); Ctrl-C stops it all"
echo "relay 127.0.0.1:$port/$key"

# Until Ctrl-C, or until one of them stops by itself.
set +e
wait -n "${pids[@]}"
for i in "${!pids[@]}"; do
    kill -0 "${pids[i]}" 2>/dev/null || { say "${names[i]} (PID ${pids[i]}) stopped; stopping the rest"; tail -n 5 "$dir/${names[i]}.log" >&2; }
done
exit 1
