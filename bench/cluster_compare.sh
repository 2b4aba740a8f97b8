#!/usr/bin/env bash
# Cluster mode (issue 14, acceptance 6) with 1, 2 and 3 nodes on one Redis, beside the embedded
# single node (no --redis) as the baseline, back to back in one run. Per configuration:
#   writes   acknowledged publishes/s: bench/throughput.py, 100 connections (spread over the
#            nodes, i mod n), one publish in flight each (closed loop: the most the servers ack);
#   fanout   /v1 fan-out: huddle-loadtest fanout, subscribers spread over the nodes, one
#            publisher on node 1 (so most deliveries cross nodes); deliveries per server
#            CPU-second with every node's CPU summed, Redis's CPU apart;
#   latency  cross-node publish -> deliver: huddle-loadtest fanout with the publisher on node 1
#            (--publisher-url) and the subscribers on the other nodes (on node 1 itself when it
#            is alone: then it is not cross-node);
# and Redis's CPU (from /proc/PID/stat of redis-server) per acknowledged write and per delivery.
# After the writes: the log's position (entries: sign-ups and publishes of the warm-up and the
# window, a turn's writes batched in one entry) and the refused appends (conflicts), all nodes.
# CPU is read from /proc at the start and end of each measured window only (set-up excluded).
#
#   bench/cluster_compare.sh [SECONDS] [SUBSCRIBERS] [RATE]   defaults: 6 s windows, 400 subscribers at 50 msg/s
#   CONFIGS="0 2" bench/cluster_compare.sh                    only these (0 = embedded, N = N nodes)
#
# Needs redis-server, the release huddle and huddle-loadtest of this checkout
# (`swift build -c release --product huddle`, then `--product huddle-loadtest`) and the test
# venv's Python with websockets (.build/test-venv, or PYTHON=...). Every command is printed
# (with a leading +) before it runs; one TSV row per configuration and workload at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-6} SUBS=${2:-400} RATE=${3:-50}
HUDDLE=.build/release/huddle
LOADTEST=.build/release/huddle-loadtest
PY=${PYTHON:-.build/test-venv/bin/python}
for tool in "$HUDDLE" "$LOADTEST"; do [ -x "$tool" ] || { echo "build it first: $tool" >&2; exit 64; }; done
command -v redis-server >/dev/null || { echo "needs redis-server (apt-get install -y redis-server)" >&2; exit 64; }
WORK=$(mktemp -d)
PIDS=()
REDIS=
cleanup() {
    for pid in "${PIDS[@]}" $REDIS; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}" $REDIS; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT
HZ=$(getconf CLK_TCK)

run() { echo "+ $*" >&2; "$@"; }  # (background servers are started directly, so that $! is the server)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ticks() { local t=0 pid; for pid in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done; echo "$t"; }
wait_until() { for _ in $(seq 400); do eval "$1" && return 0; sleep 0.05; done; echo "timed out: $1" >&2; exit 1; }
healthy() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/healthz")" = 200 ]; }

# start_nodes N: N nodes on one fresh Redis (N=0: the embedded single node); sets PIDS, PORTS, REDIS.
start_nodes() {
    local n=$1 i port args
    PIDS=() PORTS=() REDIS=
    rm -rf "$WORK/run" && mkdir -p "$WORK/run/shared" "$WORK/run/redis"
    local bench_flags=(--log-level warning --kdf-iterations 1000 --rate-limit 100000 --user-rate-limit 100000 --user-publish-bytes 1073741824)
    if [ "$n" -gt 0 ]; then
        local redis_port; redis_port=$(free_port)
        echo "+ redis-server --port $redis_port --bind 127.0.0.1 --appendonly yes --appendfsync always --dir \$TMP --save ''" >&2
        redis-server --port "$redis_port" --bind 127.0.0.1 --appendonly yes --appendfsync always --dir "$WORK/run/redis" --save '' \
            >"$WORK/run/redis.log" 2>&1 &
        REDIS=$!
        wait_until "redis-cli -p $redis_port ping >/dev/null 2>&1"
    fi
    for i in $(seq "$(( n > 0 ? n : 1 ))"); do
        port=$(free_port)
        mkdir -p "$WORK/run/data$i"
        args=(--port "$port" --data-dir "$WORK/run/data$i" "${bench_flags[@]}")
        [ "$n" -gt 0 ] && args+=(--redis "redis://127.0.0.1:$redis_port" --node-name "node$i" --shared-dir "$WORK/run/shared")
        echo "+ $HUDDLE serve ${args[*]}" >&2
        "$HUDDLE" serve "${args[@]}" >>"$WORK/run/node$i.log" 2>&1 &
        PIDS+=($!) PORTS+=("$port")
        wait_until "healthy $port"
    done
}

stop_nodes() {
    for pid in "${PIDS[@]}" $REDIS; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}" $REDIS; do wait "$pid" 2>/dev/null || true; done
    PIDS=() REDIS=
}

# metric PORT NAME: a sample's value on the node's /metrics (a counter's whole number).
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v name="$2" '$1 == name { printf "%d\n", $2 }'; }


# fanout OUT ARGS...: runs the harness and reads the nodes' and Redis's CPU ticks over its
# measured window (from its "measuring" line to SECS later); sets NODE_TICKS, REDIS_TICKS.
fanout() {
    local out=$1; shift
    : >"$WORK/harness.err"
    echo "+ $LOADTEST fanout $* --warmup 2 --duration $SECS --json $out" >&2
    "$LOADTEST" fanout "$@" --warmup 2 --duration "$SECS" --json "$out" >/dev/null 2>"$WORK/harness.err" &
    local harness=$!
    wait_until "grep -q measuring $WORK/harness.err || ! kill -0 $harness 2>/dev/null"
    local n0 r0 n1 r1
    n0=$(ticks "${PIDS[@]}"); r0=$([ -n "$REDIS" ] && ticks "$REDIS" || echo 0)
    sleep "$SECS"
    n1=$(ticks "${PIDS[@]}"); r1=$([ -n "$REDIS" ] && ticks "$REDIS" || echo 0)
    wait "$harness" || { echo "harness not clean:" >&2; grep -iE "error|refus|fail|closed" "$WORK/harness.err" | head -5 >&2 || true; tail -2 "$WORK/harness.err" >&2; }
    NODE_TICKS=$((n1 - n0)) REDIS_TICKS=$((r1 - r0))
}

printf 'config\tload1\tacked_writes_s\tnode_cpu_us_per_write\tredis_cpu_us_per_write\tlog_entries\tappend_conflicts\tfanout_deliveries_s\tdeliveries_per_node_cpu_s\tnode_cpu_pct\tredis_cpu_us_per_delivery\tredis_cpu_pct\tlatency_p50_ms\tlatency_p99_ms\tlatency_kind\tverdicts\n' >"$WORK/rows.tsv"
echo "machine: $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for n in ${CONFIGS:-0 1 2 3}; do
    config=$([ "$n" = 0 ] && echo embedded || echo "$n-node")
    load=$(cut -d' ' -f1 /proc/loadavg)
    urls=()

    # writes
    start_nodes "$n"
    for port in "${PORTS[@]}"; do urls+=("ws://127.0.0.1:$port"); done
    all_pids=$(IFS=,; echo "${PIDS[*]}${REDIS:+,$REDIS}")
    w=$(run "$PY" bench/throughput.py "${urls[@]}" --connections 100 --procs 2 --seconds "$SECS" --warmup 2 --pids "$all_pids")
    echo "  $w" >&2
    read -r acks_s node_us_write redis_us_write < <(python3 -c '
import json, sys
r = json.loads(sys.argv[1]); redis = sys.argv[2] != ""
cpu = r["server_cpu_seconds"]; nodes = cpu[:-1] if redis else cpu
print(r["acks_per_second"], round(sum(nodes) * 1e6 / r["acks"]), round(cpu[-1] * 1e6 / r["acks"], 1) if redis else "n/a")' "$w" "$REDIS")
    conflicts=0 entries=n/a
    if [ "$n" -gt 0 ]; then
        for port in "${PORTS[@]}"; do conflicts=$((conflicts + $(metric "$port" huddle_cluster_append_conflicts_total))); done
        entries=$(metric "${PORTS[0]}" huddle_cluster_log_position)
    else
        conflicts=n/a
    fi
    stop_nodes

    # fan-out: subscribers on every node, the publisher on node 1
    start_nodes "$n"
    urls=(); for port in "${PORTS[@]}"; do urls+=(--url "ws://127.0.0.1:$port"); done
    fanout "$WORK/fanout.json" "${urls[@]}" --subscribers "$SUBS" --rate "$RATE" --server-pid "${PIDS[0]}"
    read -r deliv_s per_cpu node_pct redis_us_deliv redis_pct fanout_verdict < <(python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); secs = float(sys.argv[2]); hz = float(sys.argv[3])
node, redis = int(sys.argv[4]) / hz, int(sys.argv[5]) / hz
delivered = r["deliveriesPerSecond"] * secs
clean = "clean" if not r["errors"] and r["stream"].get("gaps", 0) == 0 else "NOT-clean"
print(round(r["deliveriesPerSecond"]), round(delivered / node) if node else "n/a", round(100 * node / secs),
      round(redis * 1e6 / delivered, 2) if sys.argv[6] else "n/a", round(100 * redis / secs) if sys.argv[6] else "n/a", clean)' \
        "$WORK/fanout.json" "$SECS" "$HZ" "$NODE_TICKS" "$REDIS_TICKS" "$REDIS")
    stop_nodes

    # latency: the publisher on node 1, the subscribers on the others
    start_nodes "$n"
    subs=(); for port in "${PORTS[@]:$(( n > 1 ? 1 : 0 ))}"; do subs+=(--url "ws://127.0.0.1:$port"); done
    fanout "$WORK/latency.json" "${subs[@]}" --publisher-url "ws://127.0.0.1:${PORTS[0]}" --subscribers "$((SUBS / 2))" --rate "$((RATE / 2))"
    read -r p50 p99 < <(python3 -c '
import json, sys
l = json.load(open(sys.argv[1]))["latency"]
print(round(l["p50"], 2), round(l["p99"], 2))' "$WORK/latency.json")
    latency_verdict=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("clean" if not r["errors"] else "NOT-clean")' "$WORK/latency.json")
    stop_nodes

    kind=$([ "$n" -gt 1 ] && echo cross-node || echo same-node)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$config" "$load" "$acks_s" "$node_us_write" "$redis_us_write" "$entries" "$conflicts" "$deliv_s" "$per_cpu" \
        "$node_pct" "$redis_us_deliv" "$redis_pct" "$p50" "$p99" "$kind" "$fanout_verdict/$latency_verdict" >>"$WORK/rows.tsv"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo
column -t -s $'\t' "$WORK/rows.tsv"
