#!/usr/bin/env bash
# Huddle side by side with the best peer of each workload (issue 15's table), in one run:
#
#   /v1 fan-out, 1000 subscribers x 1000 msg/s, --fsync always   vs NATS core (wsload_plus)
#   /v1 fan-out at max rate (256 in flight, 16 per write)         vs NATS core
#   acknowledged durable writes, 100 writers x 1 in flight        vs redis-server appendfsync always
#   raw echo, 100 connections x 1 in flight                       vs uWebSockets (wsload)
#   the same echo, Huddle with one I/O loop (--threads 1)          vs uWebSockets (one thread)
#   raw fan-out, 1000 x 1000 msg/s                                vs uWebSockets
#   raw fan-out at max rate                                       vs uWebSockets
#   idle memory per connection, 10,000 connections                vs uWebSockets
#
# Each row runs ROUNDS times, row by row, a fresh server per run, Huddle and the peer taking
# turns to go first; then one markdown table: the median of the rounds, their range, and the
# ratio oriented so that > 1 means Huddle is ahead (peer/Huddle for latency and memory).
# From the project root:
#
#   swift build -c release --product huddle && ../shared/tools/peers/setup-peers
#   UWS_ECHO=/path/uws_echo UWS_BROADCAST=/path/uws_broadcast bench/compare.sh
#
# Environment (all optional):
#   HUDDLE=path        the build under test (.build/release/huddle)
#   PEERS_BIN=dir      where setup-peers put wsload_plus (.build/peers)
#   UWS_ECHO=path      a uWebSockets server: `uws_echo PORT` serving /echo on 127.0.0.1
#   UWS_BROADCAST=path a uWebSockets server: `uws_broadcast PORT` publishing every message on
#                      /broadcast to every connection (the sender too); without these two the
#                      uWebSockets rows are skipped (uWebSockets is built outside the repository)
#   ROUNDS=3  SECS=4 (measured seconds per run)  WARMUP=1  IDLE_CONNS=10000
#   ROWS="v1-fanout v1-max acks echo echo-1loop raw-fanout raw-max idle"   a subset, in this order
#   OUT=dir            keep every RESULT line, driver summary and server log there
# Every server listens on a free 127.0.0.1 port and is stopped when its run ends (and on exit);
# every step has a time limit. Each command is printed with "+" before it runs.
# Exit status: 0 when every run gave a result and none lost a message, connection or reply;
# 1 otherwise (the table is printed anyway; its failed runs are listed under it).
set -uo pipefail
cd "$(dirname "$0")/.."
HUDDLE=${HUDDLE:-.build/release/huddle}
PEERS_BIN=${PEERS_BIN:-.build/peers}
UWS_ECHO=${UWS_ECHO:-}
UWS_BROADCAST=${UWS_BROADCAST:-}
ROUNDS=${ROUNDS:-3} SECS=${SECS:-4} WARMUP=${WARMUP:-1} IDLE_CONNS=${IDLE_CONNS:-10000}
ROWS=${ROWS:-"v1-fanout v1-max acks echo echo-1loop raw-fanout raw-max idle"}
PATH=$PATH:/usr/sbin:/sbin
WSLOAD=.build/wsload
WSLOAD_PLUS=$PEERS_BIN/wsload_plus
ACK_WRITERS=.build/ack_writers
STEP_LIMIT=$((SECS + WARMUP + 90))        # seconds any one driver run may take

OUT=${OUT:-$(mktemp -d -t huddle-compare.XXXXXX)} && mkdir -p "$OUT" || exit 1
WORK=$(mktemp -d -t huddle-compare-work.XXXXXX) || exit 1
SERVER="" PROBLEMS="" SKIPPED=""
cleanup() { stop_server; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { { printf '+'; printf ' %q' "$@"; printf '\n'; } >&2; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_server LOG PORT command...: the server in the background (SERVER), waits up to 20 s
start_server() {
    local log=$1 port=$2; shift 2
    say "$@"
    "$@" >"$log" 2>&1 &
    SERVER=$!
    for _ in $(seq 200); do
        port_open "$port" && return 0
        kill -0 "$SERVER" 2>/dev/null || break
        sleep 0.1
    done
    echo "compare: $1 did not listen on 127.0.0.1:$port; the end of its log:" >&2
    tail -n 5 "$log" | sed 's/^/  /' >&2
    stop_server
    return 1
}
# stops the server this script started, and nothing else: SIGTERM, then SIGKILL after 5 s
stop_server() {
    [ -n "$SERVER" ] || return 0
    kill "$SERVER" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER" 2>/dev/null
    wait "$SERVER" 2>/dev/null
    SERVER=""
}

# measure ROW SIDE ROUND command...: runs a driver under a time limit, keeps its RESULT line
# in $OUT/results.tsv as "ROW SIDE ROUND key=value ..."
measure() {
    local row=$1 side=$2 round=$3 line rc; shift 3
    say "$@"
    timeout -k 5 "$STEP_LIMIT" "$@" >"$WORK/out" 2>"$OUT/$row.$side.$round.err"
    rc=$?
    line=$(grep -m1 '^RESULT ' "$WORK/out")
    tail -n 2 "$OUT/$row.$side.$round.err" | sed 's/^/  /' >&2
    if [ -z "$line" ]; then
        echo "compare: no RESULT line (exit $rc)" >&2; return 1
    fi
    printf '%s\t%s\t%s\t%s\n' "$row" "$side" "$round" "${line#RESULT }" >>"$OUT/results.tsv"
    printf '  %s\n' "$line" >&2
    local lost; lost=$(lost_in "$line")
    if [ -n "$lost" ]; then PROBLEMS="$PROBLEMS $row/$side/$round($lost)"
    elif [ "$rc" -ne 0 ]; then PROBLEMS="$PROBLEMS $row/$side/$round(exit $rc, see $OUT/$row.$side.$round.err)"; fi
}
# what a RESULT line says was lost: messages not delivered, connections failed or closed,
# writers not set up, writes refused or unanswered, idle broadcasts not delivered to all
lost_in() {
    tr ' ' '\n' <<<"$1" | awk -F= '
        ($1 == "undelivered" || $1 == "failed" || $1 == "closed" || $1 == "setup_failed" || $1 == "refused" || $1 == "unanswered") && $2 != 0 { printf "%s=%s ", $1, $2 }
        $1 == "mode" { mode = $2 } $1 == "open" { open = $2 } $1 == "idle_msgs" { msgs = $2 } $1 == "deliveries" { deliv = $2 }
        END { if (mode == "idle" && deliv < msgs * (open - 1)) printf "idle deliveries=%s of %d ", deliv, msgs * (open - 1) }' | sed 's/ $//'
}

huddle_v1() { # PORT: Huddle's /v1 with --fsync always and the per-connection and per-user limits lifted
    rm -rf "$WORK/data"
    start_server "$RUN.server.log" "$1" "$HUDDLE" serve --port "$1" --data-dir "$WORK/data" --fsync always \
        --kdf-iterations 1000 --rate-limit 1000000 --user-rate-limit 1000000 --user-publish-bytes 1073741824 \
        --room-bytes-per-user 1099511627776 --no-compression --log-level warning
}
huddle_raw() { # PORT [OPTION...]: Huddle's raw /echo and /broadcast (--bench)
    local port=$1; shift
    rm -rf "$WORK/data"
    start_server "$RUN.server.log" "$port" "$HUDDLE" serve --bench --port "$port" --data-dir "$WORK/data" \
        --no-compression --log-level warning "$@"
}
nats() { # PORT: NATS core, its WebSocket listener on PORT (conf/nats.conf of the peers, other ports)
    local client; client=$(free_port)
    sed -e "s/^listen: .*/listen: 127.0.0.1:$client/" -e "s/listen: \"127.0.0.1:9104\"/listen: \"127.0.0.1:$1\"/" \
        ../shared/tools/peers/conf/nats.conf >"$WORK/nats.conf"
    start_server "$RUN.server.log" "$1" nats-server -c "$WORK/nats.conf"
}

# one run of ROW by SIDE (huddle or peer) in ROUND
run_one() {
    local row=$1 side=$2 round=$3 port; port=$(free_port)
    RUN=$OUT/$row.$side.$round
    # -D 10: a server that fell behind on a loaded machine gets 10 s to deliver the rest
    local fanout=(-c 1000 -P 1 -r 1000 -d "$SECS" -W "$WARMUP" -D 10)
    local maxrate=(-c 1000 -P 1 -r 0 -w 256 -B 16 -z 1000 -d "$SECS" -W "$WARMUP" -D 10)
    case $row/$side in
    v1-fanout/huddle) huddle_v1 "$port" && measure "$row" huddle "$round" "$WSLOAD_PLUS" -p "$port" -k huddle -U 1 "${fanout[@]}" -x "$SERVER" -L huddle;;
    v1-fanout/peer)   nats "$port" && measure "$row" peer "$round" "$WSLOAD_PLUS" -p "$port" -k nats "${fanout[@]}" -x "$SERVER" -L nats;;
    v1-max/huddle)    huddle_v1 "$port" && measure "$row" huddle "$round" "$WSLOAD_PLUS" -p "$port" -k huddle -U 1 "${maxrate[@]}" -x "$SERVER" -L huddle;;
    v1-max/peer)      nats "$port" && measure "$row" peer "$round" "$WSLOAD_PLUS" -p "$port" -k nats "${maxrate[@]}" -x "$SERVER" -L nats;;
    acks/huddle)      huddle_v1 "$port" && measure "$row" huddle "$round" "$ACK_WRITERS" -p "$port" -c 100 -d "$SECS" -W "$WARMUP" -x "$SERVER" -L huddle;;
    acks/peer)        redis_acks "$port" "$round";;
    echo/huddle)      huddle_raw "$port" && measure "$row" huddle "$round" "$WSLOAD" -p "$port" -m echo -u /echo -c 100 -w 1 -d "$SECS" -W "$WARMUP" -x "$SERVER" -L huddle;;
    echo/peer|echo-1loop/peer) start_server "$RUN.server.log" "$port" "$UWS_ECHO" "$port" && measure "$row" peer "$round" "$WSLOAD" -p "$port" -m echo -u /echo -c 100 -w 1 -d "$SECS" -W "$WARMUP" -x "$SERVER" -L uws;;
    # One loop thread, as the peer has: with a loop per core the 100 connections' round trips
    # are split over two threads that each sleep and wake for fewer of them.
    echo-1loop/huddle) huddle_raw "$port" --threads 1 && measure "$row" huddle "$round" "$WSLOAD" -p "$port" -m echo -u /echo -c 100 -w 1 -d "$SECS" -W "$WARMUP" -x "$SERVER" -L huddle;;
    raw-fanout/huddle) huddle_raw "$port" && measure "$row" huddle "$round" "$WSLOAD" -p "$port" -m bcast -u /broadcast "${fanout[@]}" -x "$SERVER" -L huddle;;
    raw-fanout/peer)  start_server "$RUN.server.log" "$port" "$UWS_BROADCAST" "$port" && measure "$row" peer "$round" "$WSLOAD" -p "$port" -m bcast -u /broadcast "${fanout[@]}" -x "$SERVER" -L uws;;
    raw-max/huddle)   huddle_raw "$port" && measure "$row" huddle "$round" "$WSLOAD" -p "$port" -m bcast -u /broadcast "${maxrate[@]}" -x "$SERVER" -L huddle;;
    raw-max/peer)     start_server "$RUN.server.log" "$port" "$UWS_BROADCAST" "$port" && measure "$row" peer "$round" "$WSLOAD" -p "$port" -m bcast -u /broadcast "${maxrate[@]}" -x "$SERVER" -L uws;;
    idle/huddle)      huddle_raw "$port" && measure "$row" huddle "$round" "$WSLOAD" -p "$port" -m idle -u /broadcast -c "$IDLE_CONNS" -d 3 -n 1 -x "$SERVER" -L huddle;;
    idle/peer)        start_server "$RUN.server.log" "$port" "$UWS_BROADCAST" "$port" && measure "$row" peer "$round" "$WSLOAD" -p "$port" -m idle -u /broadcast -c "$IDLE_CONNS" -d 3 -n 1 -x "$SERVER" -L uws;;
    esac
    stop_server
    grep -q "^$row	$side	$round	" "$OUT/results.tsv" || PROBLEMS="$PROBLEMS $row/$side/$round(no result)"
}

# Redis with every write fsynced before its reply, and redis-benchmark's 100 clients (1 request
# in flight each, as the Huddle writers). N: a calibration run of 5,000 SETs (also the warm-up),
# then N = its rate x SECS (at least 10,000), so the measured run lasts about as long as Huddle's
# window whatever the disk and the load.
redis_acks() {
    local port=$1 round=$2 rate n line cpu0 cpu1 t0 t1
    mkdir -p "$WORK/redis" && rm -rf "$WORK/redis/"*
    start_server "$RUN.server.log" "$port" redis-server --port "$port" --bind 127.0.0.1 --appendonly yes \
        --appendfsync always --save '' --dir "$WORK/redis" || return 1
    say redis-benchmark -p "$port" -c 100 -t set -n 5000 --csv
    rate=$(timeout -k 5 "$STEP_LIMIT" redis-benchmark -p "$port" -c 100 -t set -n 5000 --csv 2>/dev/null \
        | awk -F'"' '$2 == "SET" { print int($4) }')
    n=$(( ${rate:-0} * SECS )); [ "$n" -ge 10000 ] || n=10000
    say redis-benchmark -p "$port" -c 100 -t set -n "$n" --csv
    cpu0=$(server_cpu_ticks); t0=$(date +%s.%N)
    line=$(timeout -k 5 "$STEP_LIMIT" redis-benchmark -p "$port" -c 100 -t set -n "$n" --csv 2>"$OUT/acks.peer.$round.err" \
        | awk -F'"' '$2 == "SET" { printf "acks_per_s=%s ack_p50_us=%.0f ack_p99_us=%.0f ack_max_us=%.0f", $4, $10 * 1000, $14 * 1000, $16 * 1000 }')
    cpu1=$(server_cpu_ticks); t1=$(date +%s.%N)
    [ -n "$line" ] || return 1
    line="label=redis writers=100 acks=$n $line $(python3 -c "import sys, os
t = float(sys.argv[2]) - float(sys.argv[1]); cpu = (int(sys.argv[4]) - int(sys.argv[3])) / os.sysconf('SC_CLK_TCK')
print(f'dur={t:.2f} srv_cpu_pct={100 * cpu / t:.0f} acks_per_srv_cpu_s={int(sys.argv[5]) / cpu if cpu else 0:.0f}')" "$t0" "$t1" "$cpu0" "$cpu1" "$n")"
    printf '%s\t%s\t%s\t%s\n' acks peer "$round" "$line" >>"$OUT/results.tsv"
    printf '  RESULT %s\n' "$line" >&2
}
server_cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$SERVER/stat" 2>/dev/null || echo 0; }

# ---- what can run ----
[ -x "$HUDDLE" ] || { echo "compare: no $HUDDLE: swift build -c release --product huddle (or set HUDDLE)" >&2; exit 64; }
mkdir -p .build
for tool in "$WSLOAD:../shared/tools/wsload.c:-lm" "$ACK_WRITERS:bench/ack_writers.c:"; do
    IFS=: read -r bin src lib <<<"$tool"
    if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then say cc -O2 -o "$bin" "$src" $lib; cc -O2 -o "$bin" "$src" $lib || exit 1; fi
done
peer_ready() { # ROW: can its peer run? (else says why)
    case $1 in
    v1-fanout|v1-max)
        [ -x "$WSLOAD_PLUS" ] || { echo "no $WSLOAD_PLUS: run ../shared/tools/peers/setup-peers (or set PEERS_BIN)"; return 1; }
        command -v nats-server >/dev/null || { echo "no nats-server: run ../shared/tools/peers/setup-peers"; return 1; };;
    acks) command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null \
        || { echo "no redis-server / redis-benchmark (Debian: redis-server, redis-tools)"; return 1; };;
    echo|echo-1loop) [ -n "$UWS_ECHO" ] && [ -x "$UWS_ECHO" ] || { echo "UWS_ECHO is not set to a uWebSockets echo server"; return 1; };;
    raw-fanout|raw-max|idle)
        [ -n "$UWS_BROADCAST" ] && [ -x "$UWS_BROADCAST" ] || { echo "UWS_BROADCAST is not set to a uWebSockets broadcast server"; return 1; };;
    *) echo "unknown row (rows: v1-fanout v1-max acks echo echo-1loop raw-fanout raw-max idle)"; return 1;;
    esac
}
RUN_ROWS=""
for row in $ROWS; do
    if why=$(peer_ready "$row"); then RUN_ROWS="$RUN_ROWS $row"
    else echo "compare: row $row skipped: $why" >&2; SKIPPED="$SKIPPED $row"; fi
done
ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" -gt $((IDLE_CONNS + 1000)) ] || echo "compare: ulimit -n is $(ulimit -n): the idle row needs more than $IDLE_CONNS" >&2

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg) T_START=$(date +%s)
echo "compare: HUDDLE=$HUDDLE, $ROUNDS rounds of${RUN_ROWS}, $SECS s windows; load average at start $LOAD_START; output in $OUT" >&2
: >"$OUT/results.tsv"
for row in $RUN_ROWS; do
    for round in $(seq "$ROUNDS"); do
        if [ $((round % 2)) -eq 1 ]; then order="huddle peer"; else order="peer huddle"; fi
        for side in $order; do
            echo "== $row, round $round, $side (load $(cut -d' ' -f1 /proc/loadavg))" >&2
            run_one "$row" "$side" "$round"
        done
    done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT/results.tsv" "$LOAD_START" "$LOAD_END" "$(( $(date +%s) - T_START ))" "$ROUNDS" "$HUDDLE" "$IDLE_CONNS" <<'EOF'
import statistics, sys
path, load_start, load_end, elapsed, rounds, huddle, idle_conns = sys.argv[1:]
runs = {}
for line in open(path):
    row, side, rnd, kv = line.rstrip("\n").split("\t")
    fields = dict(p.split("=", 1) for p in kv.split() if "=" in p)
    runs.setdefault((row, side), []).append(fields)

LOSS_KEYS = ("undelivered", "failed", "closed", "setup_failed", "refused", "unanswered")
def incomplete(row, side):
    return sum(1 for f in runs.get((row, side), []) if any(f.get(k, "0") not in ("0", "") for k in LOSS_KEYS))

def values(row, side, key, scale):
    out = []
    for f in runs.get((row, side), []):
        try: out.append(float(f[key]) * scale)
        except (KeyError, ValueError): pass
    return out

def fmt(v, unit):
    if unit == "M": return f"{v / 1e6:.2f}M"
    if unit == "k": return f"{v / 1e3:.1f}k"
    if unit == "ms": return f"{v:.1f} ms"
    if unit == "B": return f"{v:,.0f} B"
    if unit == "%": return f"{v:.0f} %"
    return f"{v:,.0f}"

def cell(vals, unit, bad=0):
    if not vals: return "—"
    med = statistics.median(vals)
    mark = f" †{bad}" if bad else ""
    if len(vals) == 1: return fmt(med, unit) + mark
    return f"{fmt(med, unit)} ({fmt(min(vals), unit)}–{fmt(max(vals), unit)}){mark}"

# row, label, peer name, key, scale, unit, higher is better (None: no ratio)
table = [
    ("v1-fanout", "`/v1` fan-out 1000 subs × 1000 msg/s, `--fsync always`: deliveries per server CPU-s", "NATS core", "deliveries_per_srv_cpu_s", 1, "M", True),
    ("v1-fanout", "— same runs: delivery p99", "NATS core", "p99_us", 1e-3, "ms", False),
    ("v1-max", "`/v1` fan-out at max rate (`-r 0 -w 256 -B 16 -z 1000`): deliveries per server CPU-s", "NATS core", "deliveries_per_srv_cpu_s", 1, "M", True),
    ("acks", "acknowledged durable writes, 100 writers × 1 in flight (Huddle `--fsync always`, C driver): writes/s", "Redis SET `appendfsync always`, redis-benchmark -c 100", "acks_per_s", 1, "k", True),
    ("acks", "— same runs: ack p50", "Redis", "ack_p50_us", 1e-3, "ms", False),
    ("acks", "— same runs: ack p99", "Redis", "ack_p99_us", 1e-3, "ms", False),
    ("acks", "— same runs: writes per server CPU-s", "Redis", "acks_per_srv_cpu_s", 1, "k", True),
    ("echo", "raw echo, 100 connections × 1 in flight: round trips/s", "uWebSockets (1 thread)", "deliveries_per_s", 1, "k", True),
    ("echo", "— same runs: round trips per server CPU-s", "uWebSockets", "deliveries_per_srv_cpu_s", 1, "k", True),
    ("echo", "— same runs: the driver's CPU (wsload, one thread; near 100 % it is the limit)", "uWebSockets", "gen_cpu_pct", 1, "%", None),
    ("echo-1loop", "raw echo, Huddle with one I/O loop (`--threads 1`): round trips/s", "uWebSockets (1 thread)", "deliveries_per_s", 1, "k", True),
    ("echo-1loop", "— same runs: round trips per server CPU-s", "uWebSockets", "deliveries_per_srv_cpu_s", 1, "k", True),
    ("echo-1loop", "— same runs: the driver's CPU", "uWebSockets", "gen_cpu_pct", 1, "%", None),
    ("raw-fanout", "raw fan-out 1000 subs × 1000 msg/s: deliveries per server CPU-s", "uWebSockets (1 thread)", "deliveries_per_srv_cpu_s", 1, "M", True),
    ("raw-max", "raw fan-out at max rate (`-r 0 -w 256 -B 16 -z 1000`): deliveries per server CPU-s", "uWebSockets (1 thread)", "deliveries_per_srv_cpu_s", 1, "M", True),
    ("idle", f"idle memory per connection, {int(idle_conns):,} connections (`/broadcast`)", "uWebSockets (1 thread)", "per_conn_bytes", 1, "B", False),
]
print()
print(f"| workload | Huddle | peer | peer's figure | ratio |")
print(f"|---|---:|---|---:|---:|")
for row, label, peer, key, scale, unit, higher in table:
    h, p = values(row, "huddle", key, scale), values(row, "peer", key, scale)
    if not h and not p: continue
    ratio = "—"
    if h and p and higher is not None:
        mh, mp = statistics.median(h), statistics.median(p)
        r = (mh / mp if higher else mp / mh) if (mp if higher else mh) else None
        if r is not None: ratio = f"**{r:.2f}×**" if not label.startswith("—") else f"{r:.2f}×"
    print(f"| {label} | {cell(h, unit, incomplete(row, 'huddle'))} | {peer} | {cell(p, unit, incomplete(row, 'peer'))} | {ratio} |")
print()
print(f"Medians of {rounds} interleaved rounds (range in brackets); ratio > 1 means Huddle ahead "
      f"(Huddle/peer for rates, peer/Huddle for latency and memory). HUDDLE={huddle}. "
      f"Load average (1/5/15 min) at start {load_start}, at end {load_end}; {elapsed} s in all."
      + (" †n: n of the rounds lost something (messages undelivered, connections failed or closed,"
         " writes refused or unanswered); their figures are counted as measured." if any(
          incomplete(r, s) for r, s in runs) else ""))
EOF
[ -z "$SKIPPED" ] || echo "skipped rows (peer missing):$SKIPPED"
echo "results: $OUT/results.tsv" >&2
if [ -n "$PROBLEMS" ]; then echo "compare: runs that failed or lost messages:$PROBLEMS" >&2; exit 1; fi
