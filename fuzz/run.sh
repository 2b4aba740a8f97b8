#!/usr/bin/env bash
# Builds and runs the libFuzzer targets in fuzz/ (see fuzz/README.md).
#
#   fuzz/run.sh [frame|inflater|http|protocol|all] [seconds]     default: all, 600 s per target
#
# Each target is its codec's sources (Sources/HuddleWebSocket/*.swift, or for protocol
# Sources/HuddleProtocol/*.swift) plus fuzz/<Target>.swift compiled into one module with
# -sanitize=fuzzer,address, the CHuddleShims C module handed over through a module map written
# into .build-fuzz/, and linked with OpenSSL and zlib. Runs go one after another (never in
# parallel), each on .build-fuzz/corpus-<target>, seeded from fuzz/seeds/<target>/.
# Extra libFuzzer flags: FUZZ_FLAGS="-max_len=65536 ..." fuzz/run.sh inflater 60
# Build only: fuzz/run.sh <target> 0
#
# Exit status: 0 when every run finished clean; non-zero on a build failure or when a target
# crashed, timed out, leaked or ran out of memory (the reproducer's path is printed).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="$root/.build-fuzz"

usage() {
    echo "usage: fuzz/run.sh [frame|inflater|http|protocol|all] [seconds]" >&2
    exit 2
}

which_target="${1:-all}"
seconds="${2:-600}"
[[ "$seconds" =~ ^[0-9]+$ ]] || usage

# name -> Swift file (without .swift), and the longest input libFuzzer may generate. The HTTP
# target needs more than 8 KiB to reach the default 414/431 limits.
swift_file() {
    case "$1" in
        frame) echo FrameDecoderFuzzer ;;
        inflater) echo InflaterFuzzer ;;
        http) echo HTTPParserFuzzer ;;
        protocol) echo RequestDecoderFuzzer ;;
    esac
}
# name -> the module whose sources the target is built with.
source_module() {
    case "$1" in
        protocol) echo HuddleProtocol ;;
        *) echo HuddleWebSocket ;;
    esac
}
max_len() {
    case "$1" in
        frame) echo 8192 ;;
        inflater) echo 8192 ;;
        http) echo 12288 ;;
        protocol) echo 8192 ;;
    esac
}

case "$which_target" in
    all) targets=(frame inflater http protocol) ;;
    frame | FrameDecoderFuzzer) targets=(frame) ;;
    inflater | InflaterFuzzer) targets=(inflater) ;;
    http | HTTPParserFuzzer) targets=(http) ;;
    protocol | RequestDecoderFuzzer) targets=(protocol) ;;
    *) usage ;;
esac

swiftc="$(command -v swiftc)" || { echo "swiftc not found in PATH" >&2; exit 1; }
# The clang that ships with swiftc matches its sanitizer runtimes; fall back to any clang.
clang="$(dirname "$swiftc")/clang"
[[ -x "$clang" ]] || clang="$(command -v clang)" || { echo "clang not found" >&2; exit 1; }
# Link with the toolchain's lld when it has one: gold prints hundreds of harmless "Cannot export
# local symbol '__asan_check_*'" warnings for every ASan build.
linker=()
[[ -x "$(dirname "$swiftc")/ld.lld" ]] && linker=(-use-ld=lld)

mkdir -p "$build/modules"

# swiftc imports CHuddleShims through this module map; the header path is absolute, so the map is
# written per checkout rather than committed.
cat > "$build/modules/module.modulemap" <<EOF
module CHuddleShims {
    header "$root/Sources/CHuddleShims/include/CHuddleShims.h"
    link "ssl"
    link "crypto"
    link "z"
    export *
}
EOF

echo "== compiling Sources/CHuddleShims/shims.c"
"$clang" -c -g -O1 -fsanitize=address,fuzzer-no-link \
    -I "$root/Sources/CHuddleShims/include" \
    "$root/Sources/CHuddleShims/shims.c" -o "$build/shims.o"

build_target() {
    local name="$1" file
    file="$(swift_file "$name")"
    echo "== building $file"
    "$swiftc" -parse-as-library -sanitize=fuzzer,address -O -g ${linker[@]+"${linker[@]}"} \
        -module-name "$file" \
        -I "$build/modules" \
        "$root"/Sources/"$(source_module "$name")"/*.swift "$here/$file.swift" \
        "$build/shims.o" -lssl -lcrypto -lz \
        -o "$build/$file"
}

status=0
summary=()

run_target() {
    local name="$1" file corpus artifacts log rc
    file="$(swift_file "$name")"
    corpus="$build/corpus-$name"
    artifacts="$build/artifacts-$name"
    log="$build/run-$name.log"
    mkdir -p "$corpus" "$artifacts"
    if [[ -d "$here/seeds/$name" ]]; then
        cp -n "$here/seeds/$name"/* "$corpus"/ 2>/dev/null || true
    fi

    echo "== running $file for ${seconds}s on $corpus (log: $log)"
    set +e
    # No -fork/-jobs: one core at a time. The reader-level invariants are fatalError()s, which
    # libFuzzer reports as a deadly signal with the message above the stack.
    # The Swift runtime's own crash backtracer must stay out of the way: under ASan it trips a
    # false stack-buffer-underflow and then hangs, holding the log pipe open. libFuzzer and ASan
    # print the stack and write the reproducer themselves.
    SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=no}" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-symbolize=1:detect_leaks=1}" \
    "$build/$file" \
        -max_total_time="$seconds" \
        -print_final_stats=1 \
        -max_len="$(max_len "$name")" \
        -timeout=20 \
        -rss_limit_mb=2048 \
        -artifact_prefix="$artifacts/" \
        ${FUZZ_FLAGS:-} \
        "$corpus" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    set -e

    local done_line execs rate units bytes
    done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1 || true)"
    execs="$(grep -E '^stat::number_of_executed_units:' "$log" | tail -n 1 | awk '{print $2}' || true)"
    rate="$(grep -E '^stat::average_exec_per_sec:' "$log" | tail -n 1 | awk '{print $2}' || true)"
    units="$(find "$corpus" -type f | wc -l)"
    bytes="$(du -sb "$corpus" | awk '{print $1}')"

    echo
    echo "== $file: exit $rc"
    echo "   stat::number_of_executed_units: ${execs:-?}"
    echo "   stat::average_exec_per_sec:     ${rate:-?}"
    echo "   corpus: $units files, $bytes bytes in $corpus"
    [[ -n "$done_line" ]] && echo "   final: $done_line"
    if [[ $rc -ne 0 ]]; then
        status=1
        local artifact
        artifact="$(grep -oE "(Test unit written to|artifact_prefix.*; Test unit written to) [^ ]+" "$log" | tail -n 1 | awk '{print $NF}' || true)"
        echo "   FAILED: reproducer: ${artifact:-see $log}"
        echo "   replay: $build/$file ${artifact:-<file>}"
        summary+=("$name: FAILED (exit $rc) ${artifact:-}")
    else
        summary+=("$name: ok, ${execs:-?} execs, ${rate:-?} exec/s, corpus $units files ($bytes bytes); ${done_line#*DONE }")
    fi
}

for name in "${targets[@]}"; do
    build_target "$name"
done
if [[ "$seconds" -eq 0 ]]; then
    echo "== built: ${targets[*]} (in $build)"
    exit 0
fi
for name in "${targets[@]}"; do
    run_target "$name"
done

echo
echo "== summary"
for line in "${summary[@]}"; do echo "   $line"; done
exit $status
