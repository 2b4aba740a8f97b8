#!/usr/bin/env bash
# Half a million connections on one box (issue 15): a file-descriptor limit is per process, not
# per machine, so the box holds them as a cluster of N Huddle nodes on one Redis, each node under
# its `ulimit -n`, driven by M harness processes, each under its own, each from its own loopback
# source address. One command per measurement:
#
#   bench/half_million.sh connect 100000     # open 100k authenticated connections, hold them
#   bench/half_million.sh fanout  100000     # one room with 100k subscribers, 1 publisher
#   bench/half_million.sh storm   100000     # 100k subscribers dropped at once, all resume
#
# connect: every connection is a user of its own, authenticated with `app_auth` and a token the
#   harness signs (the nodes share --app-token-secret: each account is made on first sight, no
#   password hashing), subscribed to its inbox and one of ROOMS rooms; held HOLD seconds once all
#   harnesses hold. AUTH=bearer instead signs each harness's users up first (password, a session
#   each) and every connection presents its user's session token in its upgrade request: how an
#   app that signed in once reconnects, with no write per connection. Samples, idle (nodes up, no clients) and while all are held: every node's and
#   harness's RSS, redis-server's, /proc/net/sockstat, /proc/slabinfo, /proc/meminfo.
# fanout: SUBSCRIBERS over the harnesses (one shared account each), all in one room; harness 1
#   publishes RATE msg/s, the others listen (`--listen-only`); windows aligned with --start-at.
# storm: each harness runs its own `reconnect-storm` (10 rooms, 1 publisher each at RATE) over its
#   share, all drop every subscriber at the same moment (--start-at + --drop-after).
#
# Environment: PER_NODE (19500: connections per node), PER_HARNESS (19500), HOLD (60), AUTH (app or bearer),
# CONNECT_RATE (connections/s asked of all harnesses together, 1000), CONNECTIONS_PER_USER (1:
# every connection a user of its own; every node holds every user), ROOMS (1000), RATE (1), DURATION (20),
# OUT (a directory to keep the JSON results in; a fresh one by default), SETUP_RATE (connections/s
# the box sets up in all, to place --start-at: 1000), DRAIN (seconds after the window: fanout 15,
# storm 30; a storm on a box shared with other work needs longer for every client to come back).
#
# Prints the per-harness verdicts and one summary (JSON, also in $OUT/summary.json). Holds
# /tmp/huddle-bigrun.lock for the whole run above 5,000 connections. Everything it starts is
# killed when it ends, also on failure or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:?usage: bench/half_million.sh connect|fanout|storm CONNECTIONS} TOTAL=${2:?connections}
PER_NODE=${PER_NODE:-19500} PER_HARNESS=${PER_HARNESS:-19500} HOLD=${HOLD:-60} CONNECT_RATE=${CONNECT_RATE:-1000}
CONNECTIONS_PER_USER=${CONNECTIONS_PER_USER:-1} AUTH=${AUTH:-app}
ROOMS=${ROOMS:-1000} RATE=${RATE:-1} DURATION=${DURATION:-20} SETUP_RATE=${SETUP_RATE:-1000} DRAIN=${DRAIN:-}
HUDDLE=.build/release/huddle
LOADTEST=.build/release/huddle-loadtest
for tool in "$HUDDLE" "$LOADTEST"; do [ -x "$tool" ] || { echo "build it first: swift build -c release" >&2; exit 64; }; done
command -v redis-server >/dev/null || { echo "needs redis-server" >&2; exit 64; }
case $MODE in connect | fanout | storm) ;; *) echo "mode: connect, fanout or storm" >&2; exit 64 ;; esac
case $AUTH in app | bearer) ;; *) echo "AUTH: app or bearer" >&2; exit 64 ;; esac

NODES=$(( (TOTAL + PER_NODE - 1) / PER_NODE ))
HARNESSES=$(( (TOTAL + PER_HARNESS - 1) / PER_HARNESS ))
[ "$HARNESSES" -le 250 ] || { echo "at most 250 harnesses (source addresses 127.0.0.2–127.0.0.251)" >&2; exit 64; }
# Raise the soft limit to the hard one: every process started here inherits it.
ulimit -n "$(ulimit -Hn)"
FD_LIMIT=$(ulimit -n)
[ "$PER_NODE" -lt "$FD_LIMIT" ] && [ "$PER_HARNESS" -lt "$FD_LIMIT" ] || { echo "PER_NODE and PER_HARNESS must stay below ulimit -n ($FD_LIMIT)" >&2; exit 64; }

if [ "$TOTAL" -gt 5000 ]; then
    exec 9>/tmp/huddle-bigrun.lock
    echo "waiting for /tmp/huddle-bigrun.lock…" >&2
    flock 9
fi

WORK=$(mktemp -d)
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
NODE_PIDS=() HARNESS_PIDS=() REDIS=
cleanup() {
    local pid
    for pid in "${HARNESS_PIDS[@]}" "${NODE_PIDS[@]}" $REDIS; do kill "$pid" 2>/dev/null || true; done
    for pid in "${HARNESS_PIDS[@]}" "${NODE_PIDS[@]}" $REDIS; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_until() { local i; for i in $(seq 1200); do eval "$1" && return 0; sleep 0.1; done; echo "timed out: $1" >&2; exit 1; }
healthy() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/healthz")" = 200 ]; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# One sample of the machine and of every process: kernel tables, meminfo, each process's RSS.
sample() {
    local name=$1 pid
    {
        echo "== time $(date +%s.%N) load $(load)"
        echo "== sockstat"; cat /proc/net/sockstat
        echo "== meminfo"; grep -E '^(MemTotal|MemFree|MemAvailable|Slab|SReclaimable|SUnreclaim|KernelStack|PageTables):' /proc/meminfo
        echo "== slabinfo"; awk 'NR > 2 && $1 ~ /^(TCP|tcp_bind_bucket|tcp_bind2_bucket|request_sock_TCP|sock_inode_cache|filp|eventpoll_epi|eventpoll_pwq|ep_head|dentry|kmalloc-.*|skbuff_head_cache|inode_cache|pid|selinux_file_security)$/ { print $1, $2, $4 }' /proc/slabinfo
        echo "== rss"
        for pid in "${NODE_PIDS[@]}"; do echo "node $pid $(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)"; done
        for pid in "${HARNESS_PIDS[@]}"; do echo "harness $pid $(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)"; done
        [ -n "$REDIS" ] && echo "redis $REDIS $(awk '/^VmRSS/ { print $2 }' "/proc/$REDIS/status")"
        echo "== cpu_ticks"
        for pid in "${NODE_PIDS[@]}"; do echo "node $pid $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)"; done
        for pid in "${HARNESS_PIDS[@]}"; do echo "harness $pid $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)"; done
        [ -n "$REDIS" ] && echo "redis $REDIS $(awk '{ print $14 + $15 }' "/proc/$REDIS/stat")"
    } >"$OUT/sample-$name.txt"
}

echo "$MODE $TOTAL: $NODES nodes × ≤$PER_NODE, $HARNESSES harnesses × ≤$PER_HARNESS; ulimit -n $FD_LIMIT; load $(load)" >&2
echo "limits: somaxconn $(cat /proc/sys/net/core/somaxconn), syn backlog $(cat /proc/sys/net/ipv4/tcp_max_syn_backlog), ports $(tr '\t' - </proc/sys/net/ipv4/ip_local_port_range), tcp_mem $(cat /proc/sys/net/ipv4/tcp_mem | tr '\t' /) pages, file-max $(cat /proc/sys/fs/file-max), files open $(cut -f1 /proc/sys/fs/file-nr), MemAvailable $(awk '/MemAvailable/ { print $2 }' /proc/meminfo) kB" >&2

REDIS_PORT=$(free_port)
# The shared log lives in Redis's memory only: the disk is not what is measured here.
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" --maxclients 10000 >"$WORK/redis.log" 2>&1 &
REDIS=$!
wait_until "redis-cli -p $REDIS_PORT ping >/dev/null 2>&1"

SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
mkdir -p "$WORK/shared"
URLS=()
for i in $(seq "$NODES"); do
    port=$(free_port)
    mkdir -p "$WORK/data$i"
    "$HUDDLE" serve --port "$port" --threads 1 --data-dir "$WORK/data$i" --redis "redis://127.0.0.1:$REDIS_PORT" --node-name "node$i" \
        --shared-dir "$WORK/shared" --app-token-secret "$SECRET" --fsync no --kdf-iterations 1000 --rate-limit 100000 \
        --user-rate-limit 100000 --user-publish-bytes 1073741824 --log-level warning >"$WORK/node$i.log" 2>&1 &
    NODE_PIDS+=($!)
    URLS+=(--url "ws://127.0.0.1:$port")
    wait_until "healthy $port"
done
echo "+ $NODES × $HUDDLE serve --threads 1 --redis redis://127.0.0.1:$REDIS_PORT --app-token-secret … --fsync no --kdf-iterations 1000 --rate-limit 100000 --user-rate-limit 100000 --user-publish-bytes 1073741824" >&2
sleep 2
sample idle

share() { local j=$1; echo $(( TOTAL / HARNESSES + (j <= TOTAL % HARNESSES ? 1 : 0) )); }
harness() {
    local j=$1; shift
    echo "+ $LOADTEST $* --source-address 127.0.0.$((j + 1)) ${URLS[*]:0:2} … (${#URLS[@]} URLs)" >"$WORK/harness$j.err"
    "$LOADTEST" "$@" "${URLS[@]}" --source-address "127.0.0.$((j + 1))" --json "$OUT/harness$j.json" \
        >"$OUT/harness$j.out" 2>>"$WORK/harness$j.err" &
    HARNESS_PIDS+=($!)
}
# Whether every harness has said $1 or ended without (a sign-up that timed out ends one): the
# others are waited for, not cut short.
all_say() {
    local j
    for j in $(seq "$HARNESSES"); do
        grep -q "$1" "$WORK/harness$j.err" || ! kill -0 "${HARNESS_PIDS[$((j - 1))]}" 2>/dev/null || return 1
    done
}
wait_all_say() {
    local pid ended=0
    while ! all_say "$1"; do sleep 1; done
    for pid in "${HARNESS_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || ended=$((ended + 1)); done
    [ "$ended" -eq 0 ] || echo "$ended of $HARNESSES harnesses ended before: $1" >&2
    [ "$ended" -lt "$HARNESSES" ]
}

START=$(date +%s.%N)
case $MODE in
connect)
    # Every harness holds until the slowest has ramped, then HOLD more seconds: the script times
    # the hold from the moment they all hold.
    skew=$(( TOTAL / SETUP_RATE + 60 ))
    auth=(--app-token-secret "$SECRET"); [ "$AUTH" = bearer ] && auth=()
    for j in $(seq "$HARNESSES"); do
        n=$(share "$j")
        harness "$j" connect --connections "$n" --rate "$(python3 -c "print($CONNECT_RATE / $HARNESSES)")" \
            --users "$(( (n + CONNECTIONS_PER_USER - 1) / CONNECTIONS_PER_USER ))" \
            --subscribe-rooms "$ROOMS" "${auth[@]}" --hold "$((HOLD + skew))"
    done
    wait_all_say "holding for" || true
    HELD_AT=$(date +%s.%N)
    echo "all harnesses hold after $(python3 -c "print(round($HELD_AT - $START, 1))") s; load $(load)" >&2
    sleep 3
    sample held
    sleep "$((HOLD - 3))"
    sample held_end
    echo "held $HOLD s; load $(load)" >&2
    # The harnesses count what was lost while held; end their hold now.
    for pid in "${HARNESS_PIDS[@]}"; do kill -INT "$pid" 2>/dev/null || true; done
    ;;
fanout)
    start_at=$(python3 -c "import time; print(int(time.time() + $TOTAL / $SETUP_RATE + 30))")
    room="room:halfmillion-$RANDOM"
    for j in $(seq "$HARNESSES"); do
        listen=(); [ "$j" -gt 1 ] && listen=(--listen-only)
        harness "$j" fanout --subscribers "$(share "$j")" --rate "$RATE" --room "$room" --start-at "$start_at" "${listen[@]}" \
            --warmup 3 --duration "$DURATION" --drain "${DRAIN:-15}"
    done
    wait_all_say "starting at" || true
    sample held
    ;;
storm)
    start_at=$(python3 -c "import time; print(int(time.time() + $TOTAL / $SETUP_RATE + 30))")
    for j in $(seq "$HARNESSES"); do
        harness "$j" reconnect-storm --subscribers "$(share "$j")" --rooms 10 --rate "$RATE" --drop-after 5 --drop-fraction 1 \
            --start-at "$start_at" --warmup 3 --duration "$DURATION" --drain "${DRAIN:-30}"
    done
    wait_all_say "starting at" || true
    sample held
    ;;
esac

# Each harness's own verdict decides (the summary reads them): a connect hold ended by the
# script exits 130 however clean it was.
for j in $(seq "$HARNESSES"); do
    wait "${HARNESS_PIDS[$((j - 1))]}" || true
    echo "harness $j: $(tail -1 "$OUT/harness$j.out" 2>/dev/null)" >&2
done
sample end
echo "load after: $(load)" >&2
for j in $(seq "$HARNESSES"); do cp "$WORK/harness$j.err" "$OUT/"; done
for i in $(seq "$NODES"); do cp "$WORK/node$i.log" "$OUT/"; done
echo "results in $OUT" >&2
status=0
python3 bench/half_million_summary.py "$MODE" "$OUT" "$HARNESSES" "$NODES" >"$OUT/summary.json" || status=$?
cat "$OUT/summary.json"
exit "$status"
