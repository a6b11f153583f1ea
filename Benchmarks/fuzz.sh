#!/usr/bin/env bash
# libFuzzer (with AddressSanitizer) on the relay's wire parsers — the binary media-frame header and the JSON
# control messages, what every client can send — and on the escaping of remote text for logs. The target,
# Benchmarks/fuzz/WireFuzzTarget.swift, also checks that whatever parses survives encoding unchanged. Then on a
# whole relay session (Benchmarks/fuzz/SessionFuzzTarget.swift): scripts of clients publishing, sending frames
# with any times and sizes, subscribing, asking for keyframes, played into the relay's router. Each target runs
# FUZZ_RUNS executions.
#
#   Benchmarks/fuzz.sh                 10^7 executions (several minutes on one core)
#   FUZZ_RUNS=200000 Benchmarks/fuzz.sh   a short run
#   BENCH_SMOKE=1 Benchmarks/fuzz.sh      50 000 executions each (the test suite does this)
#   FUZZ_SECONDS=3600 Benchmarks/fuzz.sh  for an hour instead
#   Benchmarks/fuzz.sh --build-only       only build the target (make test does, before the tests run it)
#   FUZZ_ONLY=session Benchmarks/fuzz.sh  only the session target (FUZZ_ONLY=wire: only the parsers)
#
# Starts from the corpus kept in Benchmarks/fuzz/corpus (seeds for every message type); inputs it finds that
# reach new code go to .build/fuzz/corpus, never into the repository unless copied there on purpose. A crash
# leaves its input in .build/fuzz/ and exits non-zero. Prints executions, speed and coverage at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
bench_prepare
build=.build/fuzz
mkdir -p "$build/corpus"
swiftc=${SWIFTC:-swiftc}
# Swift's libFuzzer needs clang's runtime next to the toolchain (shipped with Swift on Linux).
flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6
  -enable-upcoming-feature InternalImportsByDefault -enable-upcoming-feature ExistentialAny -I "$build")
# The parsers' own modules, instrumented for coverage, then the target linked against them.
if [ ! -f "$build/fuzz-wire" ] || [ -n "$(find Sources/ScreenMedia Sources/ScreenWire Benchmarks/fuzz -newer "$build/fuzz-wire" -name '*.swift' | head -1)" ]; then
  echo "building the fuzz target (swiftc -sanitize=fuzzer,address)…" >&2
  # (gold's warnings about ASan's local symbols are noise: the log is shown only if the build fails)
  if ! { "$swiftc" "${flags[@]}" -emit-module -emit-library -static -module-name ScreenMedia \
      -emit-module-path "$build/ScreenMedia.swiftmodule" -o "$build/libScreenMedia.a" Sources/ScreenMedia/*.swift &&
    "$swiftc" "${flags[@]}" -emit-module -emit-library -static -module-name ScreenWire \
      -emit-module-path "$build/ScreenWire.swiftmodule" -o "$build/libScreenWire.a" Sources/ScreenWire/*.swift &&
    "$swiftc" "${flags[@]}" -module-name WireFuzz Benchmarks/fuzz/WireFuzzTarget.swift \
      "$build/libScreenWire.a" "$build/libScreenMedia.a" -o "$build/fuzz-wire"; } > "$build/build.log" 2>&1; then
    grep -v "Cannot export local symbol" "$build/build.log" >&2
    echo "fuzz.sh: the fuzz target did not build" >&2
    exit 1
  fi
fi
# The whole session: the relay's router and its policies (pure files of ScreenRelay, compiled into the target)
# driven by scripts of client actions (Benchmarks/fuzz/SessionFuzzTarget.swift).
session_sources=(Sources/ScreenRelay/Router/*.swift Sources/ScreenRelay/Shared/FIFO.swift Sources/ScreenRelay/Shared/TokenBucket.swift Sources/ScreenRelay/Metrics/RelayLimit.swift)
# Without AddressSanitizer: this is safe Swift (what it hunts are Swift's own traps: overflow, a NaN made an
# integer, a force unwrap), and ASan's bookkeeping of every allocation made it run 5 times slower.
session_build="$build/session"
session_flags=(-sanitize=fuzzer -parse-as-library -O -g -swift-version 6
  -enable-upcoming-feature InternalImportsByDefault -enable-upcoming-feature ExistentialAny -I "$session_build")
mkdir -p "$session_build"
if [ ! -f "$build/fuzz-session" ] ||
  [ -n "$(find Sources/ScreenMedia Sources/ScreenWire "${session_sources[@]}" Benchmarks/fuzz/SessionFuzzTarget.swift -newer "$build/fuzz-session" -name '*.swift' | head -1)" ]; then
  echo "building the session fuzz target…" >&2
  if ! { "$swiftc" "${session_flags[@]}" -emit-module -emit-library -static -module-name ScreenMedia \
      -emit-module-path "$session_build/ScreenMedia.swiftmodule" -o "$session_build/libScreenMedia.a" Sources/ScreenMedia/*.swift &&
    "$swiftc" "${session_flags[@]}" -emit-module -emit-library -static -module-name ScreenWire \
      -emit-module-path "$session_build/ScreenWire.swiftmodule" -o "$session_build/libScreenWire.a" Sources/ScreenWire/*.swift &&
    "$swiftc" "${session_flags[@]}" -module-name SessionFuzz Benchmarks/fuzz/SessionFuzzTarget.swift "${session_sources[@]}" \
      "$session_build/libScreenWire.a" "$session_build/libScreenMedia.a" -o "$build/fuzz-session"; } > "$build/build-session.log" 2>&1; then
    grep -v "Cannot export local symbol" "$build/build-session.log" >&2
    echo "fuzz.sh: the session fuzz target did not build" >&2
    exit 1
  fi
fi
if [ "${1:-}" = "--build-only" ]; then exit 0; fi
runs=${FUZZ_RUNS:-$(smoke_or 10000000 50000)}
limits=(-runs="$runs")
if [ -n "${FUZZ_SECONDS:-}" ]; then limits=(-max_total_time="$FUZZ_SECONDS"); fi

# fuzz NAME BINARY CORPUS-IN-REPOSITORY MAX-LEN: runs one target, prints one line, exits non-zero on a crash.
fuzz() {
  local name=$1 binary=$2 seeds=$3 max_len=$4
  mkdir -p "$build/corpus-$name"
  local started; started=$(date +%s.%N)
  set +e
  "$binary" "${limits[@]}" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/$name-" "$build/corpus-$name" $seeds 2> "$build/fuzz-$name.log"
  local status=$?
  set -e
  local elapsed; elapsed=$(echo "$(date +%s.%N) - $started" | bc)
  grep -E "^(stat::|#[0-9]+ +DONE|==[0-9]+==ERROR|SUMMARY)" "$build/fuzz-$name.log" >&2 || true
  if [ $status -ne 0 ]; then
    echo "fuzz.sh: the $name target failed (exit $status); the input is in $build/, the log in $build/fuzz-$name.log" >&2
    tail -30 "$build/fuzz-$name.log" >&2
    exit 1
  fi
  local executions; executions=$(grep -Eo "stat::number_of_executed_units: [0-9]+" "$build/fuzz-$name.log" | grep -Eo "[0-9]+$" || echo 0)
  local coverage; coverage=$(grep -Eo "cov: [0-9]+" "$build/fuzz-$name.log" | tail -1 | grep -Eo "[0-9]+" || echo "?")
  printf "%s: %s executions in %.0f s (%.0f/s), no crash; coverage %s edges; corpus %s inputs\n" \
    "$name" "$executions" "$elapsed" "$(echo "$executions / $elapsed" | bc -l)" "$coverage" "$(ls "$build/corpus-$name" | wc -l)"
}
# (The wire corpus also seeds the session: its inputs read as scripts too.)
only=${FUZZ_ONLY:-}
if [ -z "$only" ] || [ "$only" = wire ]; then fuzz "wire parsers" "$build/fuzz-wire" Benchmarks/fuzz/corpus 4096; fi
if [ -z "$only" ] || [ "$only" = session ]; then fuzz "relay session" "$build/fuzz-session" Benchmarks/fuzz/corpus 1024; fi
