#!/usr/bin/env bash
# Every huddle-loadtest scenario against a release build of Huddle, and the raw echo and
# broadcast modes against Huddle's --bench endpoints and other servers in the same run — the
# figures in BENCHMARKS.md. Each scenario gets a fresh server (memory per connection is read
# from a server that held nothing before).
#
#   bench/loadtest_bench.sh [OUT_DIR] [DURATION]
#
# OUT_DIR (default .build/loadtest-results) receives NAME.json, NAME.html (the report), NAME.txt
# (the summary table) and NAME.log (progress) per run, and summary.tsv.
# Environment:
#   PYTHON       a Python with `websockets` 15 (default .build/bench-venv/bin/python; make it
#                with `python3 -m venv .build/bench-venv && .build/bench-venv/bin/pip install websockets==15.0.1`)
#   HUMMINGBIRD  path of the Hummingbird comparison server binary (BENCHMARKS.md says how to
#                build it outside the repository); skipped when unset
#   FSYNC        Huddle's --fsync for the protocol scenarios (default always, the server's default)
#   ONLY         run only the scenarios whose names match this regular expression
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${1:-.build/loadtest-results}
DURATION=${2:-10}
BIN=.build/release
PYTHON=${PYTHON:-.build/bench-venv/bin/python}
FSYNC=${FSYNC:-always}
ONLY=${ONLY:-.}
mkdir -p "$OUT"
ulimit -n "$(ulimit -Hn)"

SERVER_PID=
DATA_DIR=
stop_server() {
    if [[ -n $SERVER_PID ]]; then kill -9 "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    SERVER_PID=
    if [[ -n $DATA_DIR ]]; then rm -rf "$DATA_DIR"; fi
    DATA_DIR=
}
trap stop_server EXIT

wait_for_port() {
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "nothing listens on port $1" >&2
    exit 1
}

# SIGKILL, not SIGTERM: see bench/README.md (graceful stop of release builds).
start_huddle() {
    stop_server
    DATA_DIR=$(mktemp -d /tmp/huddle-bench.XXXXXX)
    "$BIN/huddle" --port 9001 --bench --kdf-iterations 1000 --rate-limit 100000 --user-rate-limit 100000 \
        --user-publish-bytes 1073741824 --fsync "$FSYNC" \
        --data-dir "$DATA_DIR" --log-level warning "$@" 2>>"$OUT/huddle-server.log" &
    SERVER_PID=$!
    wait_for_port 9001
}

start_python() {
    stop_server
    "$PYTHON" bench/python_ws_server.py --port 9002 >>"$OUT/python-server.log" 2>&1 &
    SERVER_PID=$!
    wait_for_port 9002
}

start_hummingbird() {
    stop_server
    "$HUMMINGBIRD" 9003 >>"$OUT/hummingbird-server.log" 2>&1 &
    SERVER_PID=$!
    wait_for_port 9003
}

printf 'run\tload1_before\tload1_after\texit\n' > "$OUT/summary.tsv"

# run NAME ARGS…: one harness run; its exit status (2 = not clean) is recorded, not fatal.
run() {
    local name=$1
    shift
    [[ $name =~ $ONLY ]] || return 0
    local before after status=0
    before=$(cut -d' ' -f1 /proc/loadavg)
    echo "== $name (load $before): huddle-loadtest $*"
    "$BIN/huddle-loadtest" "$@" --server-pid "$SERVER_PID" --json "$OUT/$name.json" --html "$OUT/$name.html" \
        >"$OUT/$name.txt" 2>"$OUT/$name.log" || status=$?
    after=$(cut -d' ' -f1 /proc/loadavg)
    cat "$OUT/$name.txt"
    printf '%s\t%s\t%s\t%s\n' "$name" "$before" "$after" "$status" >> "$OUT/summary.tsv"
}

common=(--warmup 2 --duration "$DURATION")

# The protocol through the core (/v1).
start_huddle
run connect-v1 connect --url ws://127.0.0.1:9001 --connections 10000 --rate 2000 --hold 5
start_huddle
run fanout fanout --url ws://127.0.0.1:9001 --subscribers 1000 --rate 100 "${common[@]}"
start_huddle
run chat chat --url ws://127.0.0.1:9001 --users 2000 --rate 1 "${common[@]}"
start_huddle
run matches matches --url ws://127.0.0.1:9001 --users 1000 --friends 4 --rate 0.5 "${common[@]}"
start_huddle
run location location --url ws://127.0.0.1:9001 --users 1000 --followers 5 --rate 1 "${common[@]}"
start_huddle
run reconnect-storm reconnect-storm --url ws://127.0.0.1:9001 --subscribers 2000 --rooms 20 --rate 10 \
    --drop-after 5 --drop-fraction 0.5 --warmup 2 --duration $((DURATION + 5))

# Raw transport: each workload against each server back to back, so the servers of one row
# meet about the same load from the rest of the machine.
servers=(huddle python)
urls=(ws://127.0.0.1:9001 ws://127.0.0.1:9002)
if [[ -n ${HUMMINGBIRD:-} ]]; then
    servers+=(hummingbird)
    urls+=(ws://127.0.0.1:9003)
fi
raw() {
    local workload=$1
    shift
    for i in "${!servers[@]}"; do
        [[ $workload-${servers[$i]} =~ $ONLY ]] || continue
        "start_${servers[$i]}"
        run "$workload-${servers[$i]}" "$@" "${urls[$i]}/${RAW_PATH}" --no-compression
    done
}
RAW_PATH=echo raw echo echo --connections 100 --window 1 "${common[@]}" --url
RAW_PATH=echo raw echo-latency echo --connections 100 --rate 100 "${common[@]}" --url
RAW_PATH=broadcast raw broadcast broadcast --subscribers 1000 --rate 50 "${common[@]}" --url
RAW_PATH=broadcast raw connect-raw connect --raw --connections 10000 --rate 2000 --hold 5 --url

# Huddle's broadcast at rates the others cannot follow: where it (or the harness) stops.
for rate in 200 500 1000; do
    start_huddle
    run "broadcast-huddle-$rate" broadcast --url ws://127.0.0.1:9001/broadcast --subscribers 1000 --rate "$rate" \
        --no-compression "${common[@]}"
done
stop_server
echo "results in $OUT"
