#!/usr/bin/env python3
"""Adds up one bench/half_million.sh run: the harnesses' JSON results and the script's samples
of the machine (idle: nodes up, no clients; held: all connections open) into one summary.
Usage: half_million_summary.py MODE OUT_DIR HARNESSES NODES. Prints JSON; exits 2 when any
harness was not clean (an interrupted `connect` hold, which the script ends itself, counts as
clean when its verdict says so)."""
import json
import os
import sys

MODE, OUT, HARNESSES, NODES = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
HZ = os.sysconf("SC_CLK_TCK")


def sample(name):
    path = os.path.join(OUT, f"sample-{name}.txt")
    if not os.path.exists(path):
        return None
    sections, current = {}, None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("== "):
            words = line[3:].split()
            current = words[0]
            sections[current] = words[1:] if current == "time" else []
        elif current:
            sections[current].append(line)
    result = {"time": float(sections["time"][0]), "load": " ".join(sections["time"][2:5])}
    for line in sections["sockstat"]:
        if line.startswith("TCP:"):
            words = line.split()[1:]
            result["tcp"] = {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}
        if line.startswith("sockets:"):
            result["sockets_used"] = int(line.split()[2])
    result["meminfo_kb"] = {line.split(":")[0]: int(line.split()[1]) for line in sections["meminfo"]}
    result["slab_bytes"] = {w[0]: int(w[1]) * int(w[2]) for w in (line.split() for line in sections["slabinfo"])}
    result["rss_kb"], result["cpu_ticks"] = {}, {}
    for key in ("rss", "cpu_ticks"):
        for line in sections[key]:
            kind, pid, value = line.split()
            result["rss_kb" if key == "rss" else "cpu_ticks"].setdefault(kind, []).append(int(value))
    return result


def harnesses():
    results = []
    for j in range(1, HARNESSES + 1):
        path = os.path.join(OUT, f"harness{j}.json")
        verdict = open(os.path.join(OUT, f"harness{j}.out")).read().strip().splitlines()
        verdict = verdict[-1] if verdict else "(no output)"
        results.append((json.load(open(path)) if os.path.exists(path) else None, verdict))
    return results


def merged_percentile(distributions, percentile):
    """The percentile of the union of several distributions, each given as (count, [(p, ms)]):
    the smallest value at which the count-weighted share of values at or below reaches it."""
    total = sum(count for count, _ in distributions)
    if total == 0:
        return None
    candidates = sorted({ms for _, points in distributions for _, ms in points})

    def share(x):
        below = 0.0
        for count, points in distributions:
            reached = [p for p, ms in points if ms <= x]
            below += count * (max(reached) if reached else 0) / 100
        return below / total

    for x in candidates:
        if share(x) >= percentile / 100:
            return round(x, 1)
    return round(candidates[-1], 1) if candidates else None


def latency(results, key=None):
    if key is None:
        parts = [(r["latency"]["count"], [(p["percentile"], p["milliseconds"]) for p in r["latencyPercentiles"]]) for r in results]
        maxima = [r["latency"]["max"] for r in results]
    else:
        # Other latencies carry only their summary: merge the points it has.
        parts, maxima = [], []
        for r in results:
            s = r["otherLatencies"].get(key)
            if s and s["count"]:
                parts.append((s["count"], [(50, s["p50"]), (90, s["p90"]), (99, s["p99"]), (99.9, s["p999"]), (100, s["max"])]))
                maxima.append(s["max"])
    return {"count": sum(c for c, _ in parts), "p50_ms": merged_percentile(parts, 50), "p99_ms": merged_percentile(parts, 99),
            "max_ms": round(max(maxima), 1) if maxima else None}


def per(delta, count):
    return round(delta / count) if count else None


runs = harnesses()
results = [r for r, _ in runs if r]
clean = len(results) == HARNESSES and all(
    v == "verdict: clean" or (MODE == "connect" and v.startswith("verdict: interrupted") and v.endswith("clean so far")) for _, v in runs)
summary = {"mode": MODE, "nodes": NODES, "harnesses": HARNESSES, "clean": clean,
           "verdicts": sorted({v for _, v in runs}),
           "errors": [e for r in results for e in r["errors"]][:10],
           "failures": {}}
for r in results:
    for reason, count in r["failures"].items():
        summary["failures"][reason] = summary["failures"].get(reason, 0) + count
idle, held, held_end, end = sample("idle"), sample("held"), sample("held_end"), sample("end")
if held:
    summary["load_while_held"] = held["load"]
stream = {k: sum(r["stream"][k] for r in results) for k in ("delivered", "gaps", "missing", "duplicates", "reordered")}

if MODE == "connect":
    figures = lambda name: sum(r["figures"].get(name, 0) for r in results)
    opened = int(figures("connections_opened"))
    ramp = max((r["figures"].get("ramp_seconds", 0) for r in results), default=0)
    summary.update({
        "connections_asked": sum(int(r["parameters"]["connections"]) for r in results), "connections_opened": opened,
        "connections_failed": int(figures("connections_failed")), "lost_while_held": int(figures("lost_while_held")),
        "connect_rate_per_s": round(opened / ramp) if ramp else None, "slowest_ramp_s": round(ramp, 1),
        "connect_latency": latency(results),
        "harness_cpu_percent_min_max": [min(r.get("clientCPUPercent") or 0 for r in results), max(r.get("clientCPUPercent") or 0 for r in results)],
    })
    if idle and held:
        node_idle, node_held = idle["rss_kb"]["node"], held["rss_kb"]["node"]
        share = opened / NODES if NODES else 0
        deltas = [(h - i) * 1024 for i, h in zip(node_idle, node_held)]
        harness_held = held["rss_kb"].get("harness", [])
        summary["memory"] = {
            "nodes_rss_idle_mb": round(sum(node_idle) / 1024, 1), "nodes_rss_held_mb": round(sum(node_held) / 1024, 1),
            "node_rss_held_mb_min_max": [round(min(node_held) / 1024, 1), round(max(node_held) / 1024, 1)],
            "server_bytes_per_connection": per(sum(deltas), opened),
            "server_bytes_per_connection_per_node_min_max": [per(min(deltas), share), per(max(deltas), share)],
            "harness_rss_held_mb": round(sum(harness_held) / 1024, 1), "harness_bytes_per_connection_gross": per(sum(harness_held) * 1024, opened),
            "redis_rss_mb_idle_held": [round(idle["rss_kb"]["redis"][0] / 1024, 1), round(held["rss_kb"]["redis"][0] / 1024, 1)],
            "kernel_slab_bytes_per_connection_both_ends": {k: per(held["slab_bytes"].get(k, 0) - idle["slab_bytes"].get(k, 0), opened)
                                                         for k in sorted(held["slab_bytes"]) if abs(held["slab_bytes"].get(k, 0) - idle["slab_bytes"].get(k, 0)) > opened * 16},
            "meminfo_delta_bytes_per_connection": {k: per((held["meminfo_kb"][k] - idle["meminfo_kb"][k]) * 1024, opened)
                                                   for k in ("Slab", "SUnreclaim", "KernelStack", "PageTables", "MemAvailable")},
            "mem_available_held_gb": round(held["meminfo_kb"]["MemAvailable"] / 1024 / 1024, 2),
            "tcp_sockstat_held": held["tcp"], "sockets_used_held": held["sockets_used"],
        }
    if held and held_end:
        summary["node_cpu_percent_while_held"] = round(100 * (sum(held_end["cpu_ticks"]["node"]) - sum(held["cpu_ticks"]["node"])) / HZ / (held_end["time"] - held["time"]), 1)
else:
    summary["stream"] = stream
    summary["latency_live"] = latency(results)
    summary["deliveries_per_s"] = round(sum(r["deliveriesPerSecond"] for r in results))
    summary["sent"] = max(r["sent"] for r in results) if MODE == "fanout" else sum(r["sent"] for r in results)
    summary["harness_cpu_percent"] = sorted(round(r.get("clientCPUPercent") or 0, 1) for r in results)
    if held and end:
        seconds = end["time"] - held["time"]
        node_s = (sum(end["cpu_ticks"]["node"]) - sum(held["cpu_ticks"]["node"])) / HZ
        redis_s = (end["cpu_ticks"]["redis"][0] - held["cpu_ticks"]["redis"][0]) / HZ
        summary["cpu_from_start_to_end"] = {"seconds": round(seconds, 1), "nodes_cpu_s": round(node_s, 1), "redis_cpu_s": round(redis_s, 1),
                                            "nodes_rss_mb": round(sum(end["rss_kb"]["node"]) / 1024, 1)}
        if MODE == "fanout" and node_s:
            summary["deliveries_per_node_cpu_s"] = round(stream["delivered"] / node_s)
    if MODE == "storm":
        figures = lambda name: int(sum(r["figures"].get(name, 0) for r in results))
        summary.update({k: figures(k) for k in ("dropped", "reconnected", "reconnect_failed", "still_reconnecting", "recovered_true",
                                                 "recovered_false", "recovered_publications")})
        summary["reconnect"] = latency(results, "reconnect (drop → subscribed)")
    if MODE == "fanout":
        summary["subscribers"] = sum(int(r["parameters"]["subscribers"]) for r in results)
        # A listener expects what it heard: each must have heard all the publisher sent.
        summary["listeners_heard_every_publication"] = all(r["sent"] == results[0]["sent"] for r in results)
        summary["clean"] = summary["clean"] and summary["listeners_heard_every_publication"]
print(json.dumps(summary, indent=1, ensure_ascii=False))
sys.exit(0 if summary["clean"] else 2)
