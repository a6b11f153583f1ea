#!/usr/bin/env bash
# HLS through screenrelay at 1920x1080, typing in a terminal at 5 fps (screenpub's default rate):
#  1. glass to glass: capture → the picture presented by the viewer page's HLS mode in a real headless Chromium
#     joining a running stream (wall clock on one machine; relaybench hls-latency), with 1 s and 2 s segments;
#  2. relay CPU for one HLS stream: the relay's CPU over the same time with HLS off and on (/proc);
#  3. bytes: what the HLS segments hold against the frames' payloads (ffprobe's packet sizes) and against the
#     same frames on the WebSocket (48-byte header + metadata each).
#
#   BENCH_SECONDS  measuring time per run (default 30); BENCH_BASE=COMMIT measures glass to glass with that
#                  commit's screenpub and screenrelay too, row by row beside this one's (lib.sh's bench_base)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${BENCH_SECONDS:-$(smoke_or 30 3)}"
size=$(smoke_or 1920x1080 320x240)
bench_setup "$size"

export SCREENRELAY_SECRET
SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)
"$benchbin/screenbench" --display "$DISPLAY" --content typing --interval 0.2 & pids+=($!)
sleep 1

cpu_seconds() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$1/stat"; }

# Starts a relay (extra flags in "$@") and a screenpub publishing to it, both from $pair_bin (default: this
# commit's); sets relay_pid, pub_pid, server, viewer.
pair_bin=$bin
start_pair() {
  port=$(( 20000 + RANDOM % 20000 ))
  "$pair_bin/screenrelay" --port "$port" --data-dir "$work/relay-$port" "$@" 2>"$work/relay-$port.log" & relay_pid=$!
  pids+=("$relay_pid")
  server="http://127.0.0.1:$port"
  for _ in $(seq 100); do curl -sf "$server/healthz" >/dev/null && break; sleep 0.1; done
  "$pair_bin/screenpub" --server "$server" --fps 5 --control-socket "" >"$work/pub-$port.out" 2>"$work/pub-$port.log" & pub_pid=$!
  pids+=("$pub_pid")
  viewer=""
  for _ in $(seq 100); do
    viewer=$(grep '^viewer:' "$work/pub-$port.out" 2>/dev/null | awk '{print $2}' || true)
    [ -n "$viewer" ] && break
    sleep 0.1
  done
}
stop_pair() { kill -TERM "$pub_pid" "$relay_pid" 2>/dev/null || true; wait "$pub_pid" "$relay_pid" 2>/dev/null || true; }

echo "## HLS glass to glass: capture → picture presented by Chromium (viewer page, &hls=1), $size typing at 5 fps"
echo
versions=(this)
if [ -n "${BENCH_BASE:-}" ]; then bench_base "$BENCH_BASE"; versions=(base this); fi
echo "| segment | build | samples | p50 s | p90 s | max s |"
echo "|---:|---|---:|---:|---:|---:|"
for segment in $(smoke_or "1 2" 1); do
  for version in "${versions[@]}"; do
    if [ "$version" = base ]; then pair_bin=$base_bin label=$BENCH_BASE; else pair_bin=$bin label="this ($(git rev-parse --short HEAD))"; fi
    start_pair --hls-segment "$segment"
    # A viewer joining a stream whose HLS already runs (someone asked before): as players do, the page starts
    # three segments behind the live edge.
    session=$(grep '^session:' "$work/pub-$port.out" | awk '{print $2}')
    curl -sf "$server/hls/$session/index.m3u8?token=${viewer##*token=}" >/dev/null
    sleep $(( segment * $(smoke_or 6 3) ))
    set -- $("$benchbin/relaybench" hls-latency --url "$viewer" --seconds "$seconds")
    # samples N p50 A p90 B p99 C max D
    printf "| %s s | %s | %s | %.1f | %.1f | %.1f |\n" "$segment" "$label" "$2" "$(bc -l <<<"$4/1000")" "$(bc -l <<<"$6/1000")" "$(bc -l <<<"${10}/1000")"
    stop_pair
  done
done
pair_bin=$bin
echo
echo "## Relay CPU for one HLS stream (same publisher and content, ${seconds} s each)"
echo
echo "| HLS | relay CPU s | % of a core | stream kbit/s (the keyframes HLS asks for included) |"
echo "|---|---:|---:|---:|"
for mode in off on; do
  if [ "$mode" = on ]; then start_pair --hls-dir "$work/hls" --hls-segment 2; else start_pair; fi
  sleep 3
  before=$(cpu_seconds "$relay_pid")
  bytes_before=$(curl -sf "$server/metrics" | awk '/^screenrelay_bytes_in_total/ { print $2 }')
  sleep "$seconds"
  after=$(cpu_seconds "$relay_pid")
  bytes_after=$(curl -sf "$server/metrics" | awk '/^screenrelay_bytes_in_total/ { print $2 }')
  printf "| %s | %.2f | %.2f | %.0f |\n" "$mode" "$(bc -l <<<"$after - $before")" "$(bc -l <<<"($after - $before) * 100 / $seconds")" \
    "$(bc -l <<<"($bytes_after - $bytes_before) * 8 / 1000 / $seconds")"
  [ "$mode" = on ] && hls_session=$(grep '^session:' "$work/pub-$port.out" | awk '{print $2}')
  stop_pair
done

echo
echo "## Bytes: HLS segments against the frames they carry"
echo
dir="$work/hls/$hls_session"
cat "$dir"/init-0.mp4 > "$work/all.mp4"
for segment in $(ls "$dir" | grep '^seg-' | sort -t- -k2 -n); do cat "$dir/$segment" >> "$work/all.mp4"; done
segment_bytes=$(( $(stat -c %s "$work/all.mp4") - $(stat -c %s "$dir/init-0.mp4") ))
read -r frames payload < <(ffprobe -v error -show_entries packet=size -of csv=p=0 "$work/all.mp4" | awk '{ n++; s += $1 } END { print n, s }')
websocket=$(( payload + frames * (48 + 24) ))
echo "| frames | payload bytes | as WebSocket messages | as HLS segments | HLS / payload | HLS / WebSocket |"
echo "|---:|---:|---:|---:|---:|---:|"
printf "| %s | %s | %s | %s | %.3f | %.3f |\n" "$frames" "$payload" "$websocket" "$segment_bytes" \
  "$(bc -l <<<"$segment_bytes / $payload")" "$(bc -l <<<"$segment_bytes / $websocket")"
