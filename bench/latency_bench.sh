#!/usr/bin/env bash
# (b) Publish latency while a snapshot of a large state is being written, vs without snapshots.
#
#   bench/latency_bench.sh [BINARY] [STATE_DIR] [SECONDS]
#   defaults: .build/release/huddle, a fresh bench/gen_state.py state (100k users, 1M messages), 30
#
# Two runs on copies of the same state, both --fsync always: --snapshot-interval 3600 (no
# snapshot during the run) and --snapshot-interval 1 (snapshots back to back: the next one is due
# a second after the last one finished). bench/publish_latency.py publishes from 8 connections at
# 40/s each and splits its latencies by whether the server's snapshot thread was on a CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/huddle}
STATE=${2:-}
SECONDS_RUN=${3:-30}
PY=${PYTHON:-.build/test-venv/bin/python}
WORK=$(mktemp -d /tmp/huddle-latbench.XXXXXX)
trap 'rm -rf "$WORK"; [ -n "${PID:-}" ] && kill -9 "$PID" 2>/dev/null || true' EXIT
if [ -z "$STATE" ]; then
  STATE=$WORK/state
  python3 bench/gen_state.py "$STATE"
fi

for interval in ${INTERVALS:-3600 1}; do
  rm -rf "$WORK/data"; cp -a "$STATE" "$WORK/data"
  "$BIN" --host 127.0.0.1 --port 0 --threads 2 --kdf-iterations 1000 --fsync always \
    --snapshot-interval "$interval" --data-dir "$WORK/data" 2>"$WORK/server.log" &
  PID=$!
  until grep -q "url=ws://" "$WORK/server.log"; do kill -0 "$PID" 2>/dev/null || { echo "server exited:"; cat "$WORK/server.log"; exit 1; }; sleep 0.05; done
  PORT=$(grep -o 'url=ws://127.0.0.1:[0-9]*' "$WORK/server.log" | head -1 | sed 's/.*://')
  echo "== --snapshot-interval $interval"
  "$PY" bench/publish_latency.py "ws://127.0.0.1:$PORT" --seconds "$SECONDS_RUN" --pid "$PID" --label "interval-$interval"
  grep -E '] snapshot written' "$WORK/server.log" | sed 's/^[^ ]* //' || echo "(no snapshot during the run)"
  kill -9 "$PID"; wait "$PID" 2>/dev/null || true; PID=
done
