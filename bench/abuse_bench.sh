#!/usr/bin/env bash
# Issue 12's attack classes, each against a fresh release server while an honest pair chats:
# the honest chat round trip, the server's RSS growth and a PASS/FAIL per class, as the markdown
# table in BENCHMARKS.md ("Under attack").
#
#   bench/abuse_bench.sh [SECONDS] [CLASSES] [abuse.py options]   defaults: 12, a,b,c,d,e,f,g
#
# Builds the release binary, makes the Python venv the interop tests use if it is missing, and
# writes the table to stdout (per-class JSON on stderr). Every server is started on a free
# loopback port with its own temporary data directory and killed after its class.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_RUN=${1:-12}
CLASSES=${2:-a,b,c,d,e,f,g}
swift build -c release --product huddle >&2
VENV=.build/test-venv
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import websockets' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check websockets==15.0.1
fi
exec "$VENV/bin/python" bench/abuse.py --bin .build/release/huddle --seconds "$SECONDS_RUN" --only "$CLASSES" "${@:3}"
