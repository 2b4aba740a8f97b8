#!/usr/bin/env bash
# (a) Snapshot time and size of a large state, and start-up time from the log vs from a snapshot.
#
#   bench/snapshot_bench.sh [BINARY] [USERS] [MESSAGES] [CHANNELS]
#   defaults: .build/release/huddle 100000 1000000 50000
#
# 1. bench/gen_state.py writes the state as a log (USERS signUp + MESSAGES publish commands over
#    CHANNELS chat channels), exactly as a server would have logged it.
# 2. The server starts on it (replaying the whole log: start-up time #1) with
#    --snapshot-interval 1, so a background snapshot of the whole state starts about a second
#    later; its duration and size come from the server's "snapshot written" line. A second
#    snapshot follows. Then SIGKILL (not SIGTERM: see bench/README.md).
# 3. The server starts again, now from the newest snapshot (start-up time #2).
# FORMAT=0 writes the log's records in format 0, without the format byte (a release before it
# needs that). STATE=DIR copies an already generated state instead. Prints the figures; keeps
# nothing unless KEEP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/huddle}
USERS=${2:-100000}
MESSAGES=${3:-1000000}
CHANNELS=${4:-50000}
WORK=$(mktemp -d /tmp/huddle-snapbench.XXXXXX)
DATA=$WORK/data
trap '[ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"; [ -n "${PID:-}" ] && kill -9 "$PID" 2>/dev/null || true' EXIT

ms() { echo $(( $(date +%s%N) / 1000000 )); }
rss() { awk '/^VmRSS|^VmHWM/ {printf "%s %d MiB  ", $1, $2/1024}' "/proc/$1/status"; }
HZ=$(getconf CLK_TCK)
# CPU seconds (user + system) of a process, or of its thread named $2.
cpu() {
  local stat=/proc/$1/stat
  if [ -n "${2:-}" ]; then
    for t in /proc/$1/task/*; do [ "$(cat "$t/comm")" = "$2" ] && stat=$t/stat; done
  fi
  awk -v hz="$HZ" '{printf "%.1f", ($14 + $15) / hz}' "$stat"
}

# start LOGFILE ARGS…: starts the server, waits until it listens; sets PID and STARTUP_MS.
start() {
  local log=$1; shift
  local t0; t0=$(ms)
  "$BIN" --host 127.0.0.1 --port 0 --threads 2 --kdf-iterations 1000 --data-dir "$DATA" "$@" >/dev/null 2>"$log" &
  PID=$!
  until grep -q 'url=ws://' "$log"; do
    kill -0 "$PID" 2>/dev/null || { cat "$log"; exit 1; }
    sleep 0.01
  done
  STARTUP_MS=$(( $(ms) - t0 ))
}

wait_for() {  # LOGFILE PATTERN COUNT
  until [ "$(grep -c -- "$2" "$1" || true)" -ge "$3" ]; do
    kill -0 "$PID" 2>/dev/null || { tail -20 "$1"; exit 1; }
    sleep 0.05
  done
}

if [ -n "${STATE:-}" ]; then
  echo "== copying the state in $STATE"
  cp -a "$STATE" "$DATA"
else
  echo "== generating $USERS users, $MESSAGES messages over $CHANNELS chat channels"
  python3 bench/gen_state.py "$DATA" --users "$USERS" --messages "$MESSAGES" --channels "$CHANNELS" --format "${FORMAT:-1}"
fi
"$BIN" data inspect --data-dir "$DATA" | head -3

echo "== start-up replaying the whole log"
sync; start "$WORK/run1.log" --snapshot-interval 1; echo "time to listening: $STARTUP_MS ms, process CPU $(cpu "$PID") s"
grep -E 'recovered' "$WORK/run1.log" | sed 's/^[^ ]* //'
echo "memory after start: $(rss "$PID")"
wait_for "$WORK/run1.log" '] snapshot written' 2
grep -E '] snapshot written' "$WORK/run1.log" | sed 's/^[^ ]* //'
echo "memory after two snapshots: $(rss "$PID"); snapshot thread CPU for both: $(cpu "$PID" huddle-snapshot) s"
kill -9 "$PID"; wait "$PID" 2>/dev/null || true; PID=
"$BIN" data inspect --data-dir "$DATA"

echo "== start-up from the snapshot"
sync; start "$WORK/run2.log" --snapshot-interval 3600; echo "time to listening: $STARTUP_MS ms, process CPU $(cpu "$PID") s"
grep -E 'loaded snapshot|recovered' "$WORK/run2.log" | sed 's/^[^ ]* //'
echo "memory after start: $(rss "$PID")"
kill -9 "$PID"; wait "$PID" 2>/dev/null || true; PID=
