#!/usr/bin/env bash
# screenrelay benchmarks on loopback, 1920x1080:
#  1. latency: screenpub captures Xvfb content and publishes to screenrelay; relaybench subscribes, decodes
#     with libvpx and measures capture → decoded picture (CLOCK_MONOTONIC on both ends, so exact), p50/p90/p99;
#  2. fan-out: one publisher replays a 30 fps recording of scrolling text to 1, 10, 100 and 500 subscribers;
#     relay CPU (% of one core, from /proc), capture-stamp → arrival latency p50/p99 at the subscribers,
#     bytes out, missing frames and the relay's resident memory.
#
# With two or more cores the relay runs on core 0 and the fan-out's subscribers on core 1, so that the
# relay's CPU and the subscribers' work are not mixed up; rows of more than BENCH_ONE_CORE_UP_TO subscribers
# (1000) run both unpinned ("both cores"): the relay's event loops and sessions then spread over every core,
# beside the load generator.
#
#   BENCH_SECONDS  measuring time per run (default 15); BENCH_FANOUT  subscriber counts (default "1 10 100 500 1000
#   2000");
#   BENCH_LATENCY=0 skips the latency part; BENCH_BASE=COMMIT runs the fan-out with that commit's screenrelay too,
#   row by row beside this one's (built once, lib.sh's bench_base), so that a change to the relay is measured
#   before and after in one run, on the same machine at the same time.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${BENCH_SECONDS:-$(smoke_or 15 2)}"
fanout="${BENCH_FANOUT:-$(smoke_or "1 10 100 500 1000 2000" 2)}"
one_core_up_to="${BENCH_ONE_CORE_UP_TO:-1000}"
size=$(smoke_or 1920x1080 320x240)
bench_setup "$size"

export SCREENRELAY_SECRET
SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)
relay_core=() subscriber_core=()
if [ "$(nproc)" -ge 2 ]; then relay_core=(taskset -c 0) subscriber_core=(taskset -c 1); fi
relay_pid=""
# start_relay BINARY_DIR SUBSCRIBERS: a screenrelay of that build (bench_relay), as $relay_pid and $server (the one before
# stopped), pinned as the row asks ($pinned), holding a session of that many (where the build has the option).
start_relay() {
  if [ -n "$relay_pid" ]; then kill "$relay_pid" 2>/dev/null || true; wait "$relay_pid" 2>/dev/null || true; fi
  local options=()
  if "$1/screenrelay" --help 2>&1 | grep -q -- --max-connections-per-session; then
    options+=(--max-connections-per-session "$(( ${2:-1} + 100 ))")
  fi
  relay_launcher=("${relay_core[@]}")
  [ "$pinned" = 1 ] || relay_launcher=()
  bench_relay "$1" "$work/relay.log" "${options[@]}"
}
pinned=1
start_relay "$bin"
versions=(this)
if [ -n "${BENCH_BASE:-}" ]; then bench_base "$BENCH_BASE"; versions=(base this); fi

content_pid=""
start_content() {
  [ -n "$content_pid" ] && kill "$content_pid" 2>/dev/null && wait "$content_pid" 2>/dev/null || true
  "$benchbin/screenbench" --display "$DISPLAY" --content "$1" --interval "$2" & content_pid=$!
  pids+=("$content_pid")
  sleep 1
}

echo "## Latency: capture → decoded picture at a subscriber (screenpub → screenrelay → relaybench, loopback)"
echo
echo "| content | fps | screenpub options | frames | p50 ms | p90 ms | p99 ms | max ms |"
echo "|---|---:|---|---:|---:|---:|---:|---:|"
latency() {
  local name=$1 content=$2 interval=$3 fps=$4
  shift 4
  start_content "$content" "$interval"
  "$bin/screenpub" --server "$server" --fps "$fps" "$@" >"$work/pub.out" 2>"$work/pub.log" & local pub=$!
  local token=""
  for _ in $(seq 100); do
    token=$(grep -o 'token=[^ ]*' "$work/pub.out" 2>/dev/null | head -1 | cut -d= -f2 || true)
    [ -n "$token" ] && break
    sleep 0.1
  done
  read -r _ frames _ p50 _ p90 _ p99 _ max < <("$benchbin/relaybench" latency --server "$server" --token "$token" --seconds "$seconds")
  kill -TERM "$pub" 2>/dev/null || true; wait "$pub" 2>/dev/null || true
  printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n" "$name" "$fps" "${*:-defaults}" "$frames" "$p50" "$p90" "$p99" "$max"
}
if [ "${BENCH_LATENCY:-1}" != 0 ]; then
latency "typing (one line per 200 ms)" typing 0.2 5
latency "typing (one line per frame)" typing 0.033 30
latency "scrolling text (every row changes per frame)" terminal 0.033 30
latency "scrolling text (every row changes per frame)" terminal 0.033 30 --threads 1
latency "scrolling text (every row changes per frame)" terminal 0.033 30 --codec vp9 --speed 9
fi

# A recording to replay for the fan-out: 8 s of scrolling text at 30 fps.
start_content terminal 0.033
"$bin/screenpub" --output "$work/replay.webm" --fps 30 --duration "$(smoke_or 8 2)" 2>/dev/null
kill "$content_pid" 2>/dev/null || true

echo
echo "## Fan-out: one 30 fps $size stream (replayed scrolling text, $(( $(stat -c %s "$work/replay.webm") * 8 / 8 / 1000 )) kbit/s) → N subscribers"
echo
echo "| relay | subscribers | cores | relay CPU % of a core | p50 ms | p99 ms | max ms | out Mbit/s | missing frames | relay RSS MB |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for n in $fanout; do
  pinned=1 cores_label="one" load_core=("${subscriber_core[@]}")
  if [ "$n" -gt "$one_core_up_to" ]; then pinned=0 cores_label="both" load_core=(); fi
  for version in "${versions[@]}"; do
    if [ "$version" = base ]; then start_relay "$base_bin" "$n"; label="$BENCH_BASE"; else start_relay "$bin" "$n"; label="this ($(git rev-parse --short HEAD))"; fi
    line=$("${load_core[@]}" "$benchbin/relaybench" fanout --server "$server" --secret "$SCREENRELAY_SECRET" --recording "$work/replay.webm" \
      --subscribers "$n" --fps 30 --seconds "$seconds" --relay-pid "$relay_pid")
    set -- $line
    # (the subscribers column: those that connected) subscribers N connected C sent S received R missing M% p50 A p99 B max X relayCPU Y% outMbit Z relayRSSMB W
    connected=$4
    [ "$4" = "$2" ] || connected="$4 of $2"  # a relay that holds fewer in a session (fa734f1 held no 2000)
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$label" "$connected" "$cores_label" "${18%\%}" "${12}" "${14}" "${16}" "${20}" "${10}" "${22}"
  done
done
