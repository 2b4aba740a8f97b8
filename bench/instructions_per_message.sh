#!/usr/bin/env bash
# Server instructions per message under callgrind: a figure that a busy machine does not
# disturb (wall-clock and CPU-second figures need a quiet one), to compare two builds.
#
#   bench/instructions_per_message.sh BIN echo|broadcast|fanout|fanout-max|acks [SECONDS] [TOP]     defaults: 10 s, top 25
#
# echo: wsload, 100 connections round-tripping 32-byte messages on /echo (one in flight each);
# per message = instructions / messages echoed. broadcast: wsload, 1 publisher at 20 msg/s to
# 200 subscribers on /broadcast; per message = instructions / deliveries. fanout: huddle-loadtest fanout, 1 publisher at
# 20 msg/s to 100 subscribers on /v1; per message = instructions / deliveries. fanout-max: the peers'
# max-rate /v1 row (../shared/tools/peers/README.md): wsload_plus, 1000 subscribers of one room
# sharing one user (-U 1), one publisher in a closed loop, 256 publishes in flight, 16 per write,
# compression off, --fsync no; per message = instructions / deliveries. acks: bench/ack_writers.c,
# 100 writers publishing to their own rooms, one acknowledged publish in flight each,
# --fsync always (compare.sh's acks row); per message = instructions / publish requests the
# server received while counting (its huddle_messages_received_total). The counters are
# zeroed once the load is connected (sign-ups and handshakes are not counted) and dumped at its
# end. Counts user-space instructions of every server thread, not the kernel's: system calls
# cost the same to both builds but are not in the figure.
#
# Needs valgrind (callgrind_control, callgrind_annotate), cc (builds ../shared/tools/wsload.c
# into .build/wsload and ../shared/tools/peers/wsload_plus.c into .build/peers/wsload_plus if
# missing) and, for fanout, this checkout's release huddle-loadtest.
# KEEP=FILE keeps the callgrind dump there (for `callgrind_annotate --tree=caller`, which names
# who calls the allocator or the exclusivity checks).
# Valgrind 3.19 cannot read the DWARF 5 that swiftc emits, so a copy of BIN without debug
# info is profiled (function names come from the symbol table).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$1 MODE=$2 SECS=${3:-10} TOP=${4:-25}
WSLOAD=.build/wsload
WSLOAD_PLUS=.build/peers/wsload_plus
LOADTEST=.build/release/huddle-loadtest
[ -x "$WSLOAD" ] || cc -O2 -o "$WSLOAD" ../shared/tools/wsload.c -lm
[ -x "$WSLOAD_PLUS" ] || { mkdir -p .build/peers && cc -O2 -o "$WSLOAD_PLUS" ../shared/tools/peers/wsload_plus.c -lm; }
ACK_WRITERS=.build/ack_writers
{ [ -x "$ACK_WRITERS" ] && [ ! bench/ack_writers.c -nt "$ACK_WRITERS" ]; } || cc -O2 -o "$ACK_WRITERS" bench/ack_writers.c
WORK=$(mktemp -d)
SERVER= WATCH=
trap '[ -n "$WATCH" ] && kill "$WATCH" 2>/dev/null; [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT
objcopy --strip-debug "$BIN" "$WORK/huddle"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir "$WORK/data"
FSYNC=()
[ "$MODE" = fanout-max ] && FSYNC=(--fsync no --no-compression)
[ "$MODE" = acks ] && FSYNC=(--fsync always --no-compression --room-bytes-per-user 1099511627776)
# SEPARATE_THREADS=1: one dump per server thread (the loop, the core, huddle-sync), each
# reported apart; the figure is their sum.
THREADS=()
[ -n "${SEPARATE_THREADS:-}" ] && THREADS=(--separate-threads=yes)
valgrind --tool=callgrind "${THREADS[@]}" --callgrind-out-file="$WORK/callgrind.out" "$WORK/huddle" --port "$PORT" --data-dir "$WORK/data" \
    "${FSYNC[@]}" --bench --log-level warning --kdf-iterations 1000 --rate-limit 100000 --user-rate-limit 100000 \
    --user-publish-bytes 1073741824 >"$WORK/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 600); do (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break; sleep 0.1; done

# zero_once PATTERN: zeroes the counters as soon as the load's progress output shows PATTERN.
zero_once() {
    until grep -q "$1" "$WORK/load.err" 2>/dev/null; do sleep 0.05; done
    callgrind_control -z "$SERVER" >/dev/null
}
case $MODE in
echo)
    zero_once connected & WATCH=$!
    "$WSLOAD" -p "$PORT" -m echo -u /echo -c 100 -w 1 -W 0 -d "$SECS" -x "$SERVER" >"$WORK/load.out" 2>"$WORK/load.err"
    MESSAGES=$(tr ' ' '\n' <"$WORK/load.out" | sed -n 's/^sent=//p')
    ;;
broadcast)
    zero_once connected & WATCH=$!
    "$WSLOAD" -p "$PORT" -m bcast -u /broadcast -c 200 -P 1 -r 20 -W 0 -d "$SECS" -x "$SERVER" >"$WORK/load.out" 2>"$WORK/load.err"
    MESSAGES=$(tr ' ' '\n' <"$WORK/load.out" | sed -n 's/^deliveries=//p' | head -1)
    ;;
fanout)
    [ -x "$LOADTEST" ] || { echo "build the harness first: swift build -c release" >&2; exit 64; }
    zero_once 'subscribed;' & WATCH=$!
    "$LOADTEST" fanout --url "ws://127.0.0.1:$PORT" --subscribers 100 --rate 20 --warmup 0 --duration "$SECS" \
        --server-pid "$SERVER" --json "$WORK/fanout.json" >"$WORK/load.out" 2>"$WORK/load.err"
    MESSAGES=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["stream"]["delivered"])' "$WORK/fanout.json")
    ;;
fanout-max)
    zero_once connected & WATCH=$!
    # The 256 publications in flight at the window's end are drained (-D) and counted: the
    # server's own delivery counter, read before the dump, is the figure (the driver's counts
    # only the window's).
    "$WSLOAD_PLUS" -p "$PORT" -k huddle -U 1 -c 1000 -P 1 -r 0 -w 256 -B 16 -z 1000 -W 0 -d "$SECS" -D 300 -x "$SERVER" \
        >"$WORK/load.out" 2>"$WORK/load.err"
    MESSAGES=$(curl -s "http://127.0.0.1:$PORT/metrics" | sed -n 's/^huddle_deliveries_total //p')
    ;;
acks)
    metric() { curl -s "http://127.0.0.1:$PORT/metrics" | sed -n 's/^huddle_messages_received_total //p'; }
    { zero_once 'set up;'; metric >"$WORK/received.0"; } & WATCH=$!
    "$ACK_WRITERS" -p "$PORT" -c 100 -W 0 -d "$SECS" -t $((SECS + 600)) -x "$SERVER" >"$WORK/load.out" 2>"$WORK/load.err"
    wait "$WATCH" 2>/dev/null || true
    WATCH=
    MESSAGES=$(( $(metric) - $(cat "$WORK/received.0") ))
    ;;
*)
    echo "workload: echo, broadcast, fanout, fanout-max or acks" >&2
    exit 64
    ;;
esac
wait "$WATCH" 2>/dev/null || true
WATCH=
callgrind_control -d "$SERVER" >/dev/null
kill "$SERVER"
wait "$SERVER" 2>/dev/null || true
SERVER=
DUMPS=$(ls "$WORK"/callgrind.out.*)
DUMP=$(head -1 <<<"$DUMPS")
TOTAL=0
for dump in $DUMPS; do TOTAL=$((TOTAL + $(sed -n 's/^summary: //p' "$dump"))); done
# KEEP: one dump goes to FILE; with SEPARATE_THREADS, one per thread to FILE.<dump>-<thread>.
if [ -n "${KEEP:-}" ]; then
    if [ "$(wc -l <<<"$DUMPS")" -eq 1 ]; then cp "$DUMP" "$KEEP"
    else for dump in $DUMPS; do cp "$dump" "$KEEP${dump##*/callgrind.out}"; done; fi
fi
echo "$MODE: $MESSAGES messages, $TOTAL instructions, $((TOTAL / MESSAGES)) per message"
# top DUMP THREAD_TOTAL: its top entries, instructions per message (exclusive). The frames live
# when the counters were zeroed (thread entries, the loop's run) are reported with everything
# under them: left out.
top() {
    callgrind_annotate --threshold=100 "$1" 2>/dev/null |
        sed -n 's/^ *\([0-9,]*\) ([ 0-9.]*%)  \(.*\) \[.*$/\1 \2/p' | tr -d , | grep -v 'PROGRAM TOTALS' |
        awk -v m="$MESSAGES" -v t="$2" '$1 * 2 < t { n = $1; $1 = ""; sub(/^ [^:]*:/, ""); printf "%8.0f %s\n", n / m, $0 }' |
        sort -rn | head -"$TOP"
}
if [ "$(wc -l <<<"$DUMPS")" -eq 1 ]; then
    echo "top functions, instructions per message (exclusive):"
    top "$DUMP" "$TOTAL"
else
    for dump in $DUMPS; do
        count=$(sed -n 's/^summary: //p' "$dump")
        [ $((count / MESSAGES)) -ge 10 ] || continue
        echo "thread ${dump##*-}: $((count / MESSAGES)) per message; top functions (exclusive):"
        top "$dump" "$count"
    done
fi
