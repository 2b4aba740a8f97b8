#!/usr/bin/env bash
# (c) Acknowledged writes per second: huddle --fsync always vs everysec under C concurrent writers
# (one publish in flight each), next to redis-benchmark SET with appendfsync always / everysec,
# in the same run, on the same disk.
#
#   bench/throughput_bench.sh [BINARY] [CONNECTIONS] [SECONDS]
#   defaults: .build/release/huddle 100 10
#
# Needs redis-server and redis-benchmark (apt-get install -y redis-server). Reports each side's
# CPU use (server and client, percent of one core) so a saturated client shows.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/huddle}
CONNECTIONS=${2:-100}
SECONDS_RUN=${3:-10}
PY=${PYTHON:-.build/test-venv/bin/python}
REDIS_PORT=${REDIS_PORT:-6399}
WORK=$(mktemp -d /tmp/huddle-tpbench.XXXXXX)
trap 'rm -rf "$WORK"; [ -n "${PID:-}" ] && kill -9 "$PID" 2>/dev/null || true' EXIT
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

for fsync in always everysec; do
  rm -rf "$WORK/data"
  "$BIN" --host 127.0.0.1 --port 0 --threads 2 --kdf-iterations 1000 --fsync "$fsync" \
    --data-dir "$WORK/data" 2>"$WORK/server.log" &
  PID=$!
  until grep -q "url=ws://" "$WORK/server.log"; do kill -0 "$PID" 2>/dev/null || { echo "server exited:"; cat "$WORK/server.log"; exit 1; }; sleep 0.05; done
  PORT=$(grep -o 'url=ws://127.0.0.1:[0-9]*' "$WORK/server.log" | head -1 | sed 's/.*://')
  before=$(ticks "$PID"); t0=$(date +%s%N)
  result=$("$PY" bench/throughput.py "ws://127.0.0.1:$PORT" --connections "$CONNECTIONS" --procs 2 \
    --seconds "$SECONDS_RUN" --label "huddle fsync=$fsync")
  after=$(ticks "$PID"); t1=$(date +%s%N)
  # Server CPU over the whole client run (signups and warm-up included).
  echo "$result server_cpu_percent=$(( (after - before) * 100 * 1000000000 / HZ / (t1 - t0) ))"
  kill -9 "$PID"; wait "$PID" 2>/dev/null || true; PID=
done

for fsync in always everysec; do
  rm -rf "$WORK/redis"; mkdir -p "$WORK/redis"
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly yes --appendfsync "$fsync" \
    --dir "$WORK/redis" --daemonize no --logfile "$WORK/redis.log" &
  PID=$!
  until redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; do sleep 0.05; done
  before=$(ticks "$PID")
  TIMEFORMAT='%U %S %R'
  { time redis-benchmark -p "$REDIS_PORT" -t set -c "$CONNECTIONS" -n 100000 -q > "$WORK/rb.out" 2>&1 ; } 2> "$WORK/rb.time"
  after=$(ticks "$PID")
  read -r u s r < "$WORK/rb.time"
  client=$(python3 -c "print(round(100*($u+$s)/$r,1))")
  server=$(python3 -c "print(round(100*($after-$before)/$HZ/$r,1))")
  echo "redis appendfsync=$fsync: $(tr '\r' '\n' < "$WORK/rb.out" | grep -E '^SET' | tail -1) client_cpu_percent=$client server_cpu_percent=$server"
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || kill -9 "$PID"
  wait "$PID" 2>/dev/null || true; PID=
done
