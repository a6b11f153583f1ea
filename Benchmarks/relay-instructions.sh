#!/usr/bin/env bash
# The relay's own instructions per delivered frame, counted by valgrind's callgrind during a fan-out (relaybench
# fanout), with this commit's screenrelay and a base commit's (BENCH_BASE) side by side. Counts, unlike CPU time,
# hold on a machine that is busy with other work, so that a change to the relay's hot path is measured even there.
# User-space instructions only (the kernel's TCP is not counted: see relay.sh for CPU time).
#
# Each relay runs under callgrind with instrumentation off; once its N subscribers are connected and 5 s have
# passed, instrumentation goes on for BENCH_SECONDS, and the frames delivered meanwhile come from its /metrics.
# Under callgrind a relay runs ~50 times slower: the rows are small (BENCH_ROWS, "SUBSCRIBERS:FPS …"). The relay
# counted is always the static release build (valgrind 3.19 stops on a debug build's shared Swift runtime), in a
# smoke run too.
#
#   BENCH_BASE (a commit), BENCH_ROWS (default "50:10 200:5"), BENCH_SECONDS (10), BENCH_RELEASE_BIN (the release
#   build's directory, instead of building it: make test sets it for the smoke run)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
rows="${BENCH_ROWS:-$(smoke_or "50:10 200:5" "2:5")}"
seconds="${BENCH_SECONDS:-$(smoke_or 10 2)}"
if ! command -v valgrind >/dev/null || ! command -v callgrind_control >/dev/null; then
  echo "relay-instructions.sh: valgrind is not installed; skipped" >&2
  exit 0
fi
bench_setup "$(smoke_or 1920x1080 320x240)"
if [ -n "${BENCH_RELEASE_BIN:-}" ]; then
  counted_bin=$BENCH_RELEASE_BIN
elif [ "$smoke" = 1 ] && [ -n "${BENCH_BIN:-}" ]; then
  # Inside `swift test` a `swift build` waits for the lock the test run holds on .build until the run ends.
  echo "relay-instructions.sh: a smoke run with the tests' binaries needs BENCH_RELEASE_BIN, the release build's directory (make test sets it; swift build cannot run inside swift test)" >&2
  exit 1
else
  counted_bin=$(scripts/release-build.sh screenrelay)
fi
versions=(this)
if [ -n "${BENCH_BASE:-}" ]; then bench_base "$BENCH_BASE"; versions=(base this); fi

# A recording to replay: 8 s of scrolling text at 30 fps.
"$benchbin/screenbench" --display "$DISPLAY" --content terminal --interval 0.033 & content_pid=$!
pids+=("$content_pid")
sleep 1
"$bin/screenpub" --output "$work/replay.webm" --fps 30 --duration "$(smoke_or 8 2)" 2>/dev/null
kill "$content_pid" 2>/dev/null || true

export SCREENRELAY_SECRET
SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)
metric() { curl -s "http://127.0.0.1:$port/metrics" -H "Authorization: Bearer $SCREENRELAY_SECRET" | awk -v m="$1" '$1 == m { print $2 }'; }

# measure BINARY SUBSCRIBERS FPS: "instructions frames"
measure() {
  # valgrind 3.19 cannot read the DWARF 5 of Swift's debug information: a copy without it (symbols kept).
  mkdir -p "$work/counted"
  strip --strip-debug -o "$work/counted/screenrelay" "$1"
  relay_launcher=(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.%p")
  bench_relay "$work/counted" "$work/valgrind.log"
  relay_launcher=()
  local relay=$relay_pid
  "$benchbin/relaybench" fanout --server "http://127.0.0.1:$port" --secret "$SCREENRELAY_SECRET" --recording "$work/replay.webm" \
    --subscribers "$2" --fps "$3" --seconds $(( seconds + 30 )) --relay-pid "$relay" >/dev/null & local bench=$!
  local waited=0
  while [ "$(metric screenrelay_connections)" != "$(( $2 + 1 ))" ]; do
    [ "$waited" -lt 600 ] && kill -0 "$bench" 2>/dev/null || { echo "relay-instructions.sh: the $2 subscribers did not all connect" >&2; exit 1; }
    sleep 0.5
    waited=$((waited + 1))
  done
  sleep 5
  local before after
  before=$(metric screenrelay_frames_out_total)
  callgrind_control -i on "$relay" >/dev/null 2>&1
  sleep "$seconds"
  callgrind_control -i off "$relay" >/dev/null 2>&1
  after=$(metric screenrelay_frames_out_total)
  callgrind_control -d "$relay" >/dev/null 2>&1
  kill "$bench" 2>/dev/null || true; wait "$bench" 2>/dev/null || true
  kill -INT "$relay" 2>/dev/null || true; wait "$relay" 2>/dev/null || true
  local dump
  dump=$(ls -t "$work"/callgrind."$relay".* 2>/dev/null | head -1)
  echo "$(awk '/^totals:/ { print $2 }' "$dump") $(( ${after:-0} - ${before:-0} ))"
  rm -f "$work"/callgrind."$relay"*
}

echo "## The relay's instructions per delivered frame (callgrind, user space; one 30 fps stream replayed → N subscribers)"
echo
echo "| relay | subscribers | fps | frames delivered | instructions | per delivered frame |"
echo "|---|---:|---:|---:|---:|---:|"
for row in $rows; do
  n=${row%%:*} fps=${row##*:}
  for version in "${versions[@]}"; do
    if [ "$version" = base ]; then binary="$base_bin/screenrelay" label="$BENCH_BASE"; else binary="$counted_bin/screenrelay" label="this ($(git rev-parse --short HEAD))"; fi
    read -r instructions frames < <(measure "$binary" "$n" "$fps")
    if [ "${frames:-0}" -le 0 ] || [ -z "${instructions:-}" ]; then echo "relay-instructions.sh: nothing was counted ($label, $n subscribers)" >&2; exit 1; fi
    per=$(( instructions / frames ))
    printf "| %s | %s | %s | %s | %s | %s |\n" "$label" "$n" "$fps" "$frames" "${instructions:-0}" "$per"
  done
done
