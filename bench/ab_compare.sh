#!/usr/bin/env bash
# Two huddle binaries side by side, in one run, per server CPU-second: the raw /echo and
# /broadcast endpoints (wsload, BENCHMARKS.md "Transport") and /v1 fan-out through the core
# (huddle-loadtest, BENCHMARKS.md "The protocol"). Rounds alternate A and B so that a machine
# whose load drifts treats both alike; the figure to compare is per server CPU-second.
#
#   bench/ab_compare.sh A_BIN B_BIN [ROUNDS] [SECONDS]      defaults: 3 rounds of 10 s
#
# Needs: cc (builds ../shared/tools/wsload.c into .build/wsload if missing) and the release
# huddle-loadtest of this checkout (`swift build -c release`). Prints one TSV row per run
# (binary, workload, round, figure, server CPU %, load) and a median per binary and workload.
set -euo pipefail
cd "$(dirname "$0")/.."
A=$1 B=$2 ROUNDS=${3:-3} SECS=${4:-10}
WSLOAD=.build/wsload
LOADTEST=.build/release/huddle-loadtest
[ -x "$WSLOAD" ] || cc -O2 -o "$WSLOAD" ../shared/tools/wsload.c -lm
[ -x "$LOADTEST" ] || { echo "build the harness first: swift build -c release" >&2; exit 64; }
WORK=$(mktemp -d)
SERVER=
trap '[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start BIN: a fresh server with its own data directory, the raw endpoints on, limits lifted
# for one harness user (as loadtest/README.md's example); sets SERVER and PORT.
start() {
    PORT=$(free_port)
    rm -rf "$WORK/data" && mkdir -p "$WORK/data"
    "$1" --port "$PORT" --data-dir "$WORK/data" --bench --log-level warning --kdf-iterations 1000 \
        --rate-limit 100000 --user-rate-limit 100000 --user-publish-bytes 1073741824 >>"$WORK/server.log" 2>&1 &
    SERVER=$!
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && return 0
        sleep 0.05
    done
    echo "server $1 did not listen on $PORT" >&2
    exit 1
}

stop() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=; }

field() { tr ' ' '\n' | sed -n "s/^$1=//p"; }

printf 'binary\tworkload\tround\tper_server_cpu_s\tserver_cpu_pct\tload1\n'
for round in $(seq "$ROUNDS"); do
    for side in A B; do
        bin=${!side}
        start "$bin"
        load=$(cut -d' ' -f1 /proc/loadavg)
        r=$("$WSLOAD" -p "$PORT" -m echo -u /echo -c 100 -w 1 -d "$SECS" -x "$SERVER" 2>/dev/null)
        printf '%s\techo\t%s\t%s\t%s\t%s\n' "$side" "$round" "$(field deliveries_per_srv_cpu_s <<<"$r")" "$(field srv_cpu_pct <<<"$r")" "$load"
        r=$("$WSLOAD" -p "$PORT" -m bcast -u /broadcast -c 1000 -P 1 -r 1000 -d "$SECS" -x "$SERVER" 2>/dev/null)
        printf '%s\tbroadcast\t%s\t%s\t%s\t%s\n' "$side" "$round" "$(field deliveries_per_srv_cpu_s <<<"$r")" "$(field srv_cpu_pct <<<"$r")" "$load"
        stop
        start "$bin"
        load=$(cut -d' ' -f1 /proc/loadavg)
        "$LOADTEST" fanout --url "ws://127.0.0.1:$PORT" --subscribers 1000 --rate 100 --warmup 2 --duration "$SECS" \
            --server-pid "$SERVER" --json "$WORK/fanout.json" >/dev/null 2>>"$WORK/harness.log" || true
        python3 - "$WORK/fanout.json" "$side" "$round" "$load" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
def find(o, key):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == key: return v
            f = find(v, key)
            if f is not None: return f
    if isinstance(o, list):
        for v in o:
            f = find(v, key)
            if f is not None: return f
per = find(r, "deliveriesPerServerCPUSecond") or find(r, "deliveries_per_server_cpu_second")
cpu = find(r, "serverCPUPercent") or find(r, "server_cpu_percent")
print(f"{sys.argv[2]}\tv1-fanout\t{sys.argv[3]}\t{round(per) if per else 'n/a'}\t{round(cpu) if cpu else 'n/a'}\t{sys.argv[4]}")
EOF
        stop
    done
done | tee "$WORK/rows.tsv"
echo
echo "medians per server CPU-second (A=$A, B=$B):"
python3 - "$WORK/rows.tsv" <<'EOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().splitlines() if l and not l.startswith("binary")]
for workload in ("echo", "broadcast", "v1-fanout"):
    med = {}
    for side in ("A", "B"):
        vals = [float(r[3]) for r in rows if r[0] == side and r[1] == workload and r[3] not in ("", "n/a")]
        med[side] = statistics.median(vals) if vals else None
    ratio = f"{med['B'] / med['A']:.2f}" if med["A"] and med["B"] else "n/a"
    print(f"  {workload:10s} A {med['A'] or 'n/a':>12} B {med['B'] or 'n/a':>12}  B/A {ratio}")
EOF
