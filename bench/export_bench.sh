#!/usr/bin/env bash
# Export archive of a heavy user (issue 16): 10k chat messages and 100 photos of 200 KB, then
# GET /api/v1/export with a fast and a slow reader; size, seconds, server CPU and RSS.
#
#   bench/export_bench.sh [BINARY] [-- export_bench.py options]
#   default binary: .build/release/huddle (swift build -c release --product huddle)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-.build/release/huddle}
shift || true
[ "${1:-}" = "--" ] && shift
PY=${PYTHON:-.build/test-venv/bin/python}
WORK=$(mktemp -d /tmp/huddle-exportbench.XXXXXX)
trap 'rm -rf "$WORK"; [ -n "${PID:-}" ] && kill -9 "$PID" 2>/dev/null || true' EXIT
# Rate limits lifted for the setup's 10k publishes; --export-interval 0 for two exports of one user.
"$BIN" --host 127.0.0.1 --port 0 --threads 2 --kdf-iterations 1000 --fsync no --data-dir "$WORK/data" \
  --rate-limit 100000 --user-rate-limit 100000 --user-publish-bytes 100000000 --user-read-bytes 100000000 \
  --export-interval 0 2>"$WORK/server.log" &
PID=$!
until grep -q "url=ws://" "$WORK/server.log"; do kill -0 "$PID" 2>/dev/null || { echo "server exited:"; cat "$WORK/server.log"; exit 1; }; sleep 0.05; done
PORT=$(grep -o 'url=ws://127.0.0.1:[0-9]*' "$WORK/server.log" | head -1 | sed 's/.*://')
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
PYTHONPATH=bench "$PY" bench/export_bench.py "ws://127.0.0.1:$PORT" --pid "$PID" "$@"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E 'export (sent|ended early)' "$WORK/server.log" | sed 's/^[^ ]* //'
kill "$PID"; wait "$PID" 2>/dev/null || true; PID=
