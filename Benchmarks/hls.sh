#!/usr/bin/env bash
# HLS through screenrelay at 1920x1080, typing in a terminal at 5 fps (screenpub's default rate), every build at
# its own defaults:
#  1. glass to glass: how far behind capture a viewer's picture is, for a viewer that starts the session's HLS
#     and one that joins it running, with the viewer page's HLS mode in a real headless Chromium (the shown
#     picture's capture time against the clock when Chromium presents it; relaybench hls-latency) and with
#     screensub --hls (the age of the newest frame it has read, sampled every 0.2 s);
#  2. what HLS costs the live viewers: a WebSocket viewer's keyframes a minute and kbit/s without an HLS reader,
#     with one on the stream as published (AV1) and with one on the H.264 variant only (an Apple device without AV1:
#     its keyframes come from the rendition), on a changing screen and on a still one; the relay's and the
#     publisher's CPU and the relay's memory beside them;
#  3. bytes: what the HLS segments hold against the frames' payloads (ffprobe's packet sizes) and against the
#     same frames on the WebSocket (48-byte header + metadata each).
#
#   BENCH_SECONDS  measuring time per row (default 30); BENCH_BASE=COMMIT runs sections 1 and 2 with that
#                  commit's screenpub, screenrelay and screensub too, row by row beside this one's (lib.sh's bench_base)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${BENCH_SECONDS:-$(smoke_or 30 3)}"
size=$(smoke_or 1920x1080 320x240)
bench_build screenpub screenrelay screensub screenbench relaybench
bench_display "$size"

export SCREENRELAY_SECRET
SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)
bench_content typing 0.2

# Starts a relay (extra flags in "$@") and a screenpub publishing to it, both from $pair_bin; sets relay_pid,
# pub_pid, server, viewer (the viewer link), token (the viewer's) and session.
pair_bin=$bin
start_pair() {
  bench_relay "$pair_bin" "$work/relay.log" "$@"
  "$pair_bin/screenpub" --server "$server" --fps 5 --control-socket "" >"$work/pub-$port.out" 2>"$work/pub-$port.log" & pub_pid=$!
  pids+=("$pub_pid")
  viewer=""
  for _ in $(seq 100); do
    viewer=$(grep '^viewer:' "$work/pub-$port.out" 2>/dev/null | awk '{print $2}' || true)
    [ -n "$viewer" ] && break
    sleep 0.1
  done
  # Until the stream is published (a player that comes before it starts the stream's packaging at once).
  for _ in $(seq 100); do grep -q 'publishing stream' "$work/pub-$port.log" 2>/dev/null && break; sleep 0.1; done
  token=${viewer##*token=}
  session=$(grep '^session:' "$work/pub-$port.out" | awk '{print $2}')
  hls_url="$server/hls/$session/index.m3u8?token=$token"
}
stop_pair() { kill -TERM "$pub_pid" "$relay_pid" 2>/dev/null || true; wait "$pub_pid" "$relay_pid" 2>/dev/null || true; }
label_of() { if [ "$1" = base ]; then echo "$BENCH_BASE"; else echo "this ($(git rev-parse --short HEAD))"; fi; }
use() { if [ "$1" = base ]; then pair_bin=$base_bin; else pair_bin=$bin; fi; }

# follow_latency SECONDS -> "samples p50 p95 max" in ms: screensub --hls from $pair_bin on $hls_url; the age of
# the newest frame it has read, every 0.2 s after the first 5 s (the start's catch-up).
follow_latency() {
  timeout $(( $1 + 8 )) "$pair_bin/screensub" --hls "$hls_url" --print-metadata --json 2>/dev/null \
    | /usr/bin/python3 -c '
import sys, json, time, datetime
warm, span = 5.0, float(sys.argv[1])
start = time.time(); newest = None; ages = []; next_sample = start + warm
for line in sys.stdin:
    now = time.time()
    while newest is not None and next_sample <= now and next_sample < start + warm + span:
        ages.append((next_sample - newest) * 1000); next_sample += 0.2
    event = json.loads(line)
    if event.get("event") == "frame" and event.get("captureTime"):
        captured = datetime.datetime.fromisoformat(event["captureTime"].replace("Z", "+00:00")).timestamp()
        newest = captured if newest is None else max(newest, captured)
    if now > start + warm + span: break
ages.sort()
pick = lambda q: ages[min(len(ages) - 1, int(q * len(ages)))] if ages else 0
print(len(ages), int(pick(0.5)), int(pick(0.95)), int(ages[-1]) if ages else 0)' "$1" || true
}

echo "## HLS glass to glass, $size typing at 5 fps, each build at its defaults"
echo
versions=(this)
if [ -n "${BENCH_BASE:-}" ]; then bench_base "$BENCH_BASE"; versions=(base this); fi
echo "| viewer | player | build | samples | p50 s | p95 s | max s |"
echo "|---|---|---|---:|---:|---:|---:|"
for when in starts joins; do
  for player in page screensub; do
    for version in "${versions[@]}"; do
      use "$version"
      start_pair
      if [ "$when" = joins ]; then
        # Someone started the session's HLS a while ago.
        curl -sf "$hls_url" >/dev/null || true
        sleep "$(smoke_or 12 3)"
      fi
      if [ "$player" = page ]; then
        # samples N p50 A p90 B p95 C p99 D max E
        set -- $("$benchbin/relaybench" hls-latency --url "$viewer" --seconds "$seconds" || echo samples 0 p50 0 p90 0 p95 0 p99 0 max 0)
        row=("$2" "$4" "${8}" "${12}")
      else
        read -r -a row < <(follow_latency "$seconds")
      fi
      printf "| %s | %s | %s | %s | %.1f | %.1f | %.1f |\n" "$when" "$player" "$(label_of "$version")" "${row[0]:-0}" \
        "$(bc -l <<<"${row[1]:-0}/1000")" "$(bc -l <<<"${row[2]:-0}/1000")" "$(bc -l <<<"${row[3]:-0}/1000")"
      stop_pair
    done
  done
done

echo
echo "## What HLS costs the live viewers: a WebSocket viewer of the same stream, ${seconds} s a row"
echo
echo "| screen | HLS read | build | keyframes a minute | viewer kbit/s | relay CPU % | publisher CPU % | relay RSS MiB |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
for screen in changing still; do
  if [ "$screen" = still ]; then bench_content_stop; else bench_content typing 0.2; fi
  for hls in no AV1 "H.264 variant"; do
    for version in "${versions[@]}"; do
      # (Builds before the H.264 variant have none to read.)
      if [ "$hls" = "H.264 variant" ] && [ "$version" = base ]; then continue; fi
      use "$version"
      start_pair
      follower=""
      case "$hls" in
        AV1) "$pair_bin/screensub" --hls "$hls_url" >/dev/null 2>&1 & follower=$!; pids+=("$follower") ;;
        # As a player that decodes H.264 alone: the multivariant playlist once, then the H.264 variant.
        H.264*) curl -sf "$hls_url" >/dev/null || true
                "$pair_bin/screensub" --hls "${hls_url/index.m3u8/h264.m3u8}" >/dev/null 2>&1 & follower=$!; pids+=("$follower") ;;
      esac
      sleep 3
      cpu_before=$(cpu_seconds_of "$relay_pid")
      pub_before=$(cpu_seconds_of "$pub_pid")
      timeout "$seconds" "$bin/screensub" --server "$server" --token "$token" --print-metadata --json --no-decode >"$work/ws.json" 2>/dev/null || true
      cpu_after=$(cpu_seconds_of "$relay_pid")
      pub_after=$(cpu_seconds_of "$pub_pid")
      rss=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$relay_pid/status")
      read -r keyframes kbps < <(/usr/bin/python3 -c '
import sys, json
seconds = float(sys.argv[2]); keyframes = 0; size = 0
for line in open(sys.argv[1]):
    frame = json.loads(line)
    if frame.get("kind") != "video": continue
    size += frame["bytes"] + 48
    if frame["keyframe"] and not frame.get("catchUp"): keyframes += 1
print("%.1f %.0f" % (keyframes * 60 / seconds, size * 8 / 1000 / seconds))' "$work/ws.json" "$seconds")
      [ -n "$follower" ] && kill "$follower" 2>/dev/null || true
      printf "| %s | %s | %s | %s | %s | %.1f | %.1f | %s |\n" "$screen" "$hls" "$(label_of "$version")" "$keyframes" "$kbps" \
        "$(bc -l <<<"($cpu_after - $cpu_before) * 100 / $seconds")" "$(bc -l <<<"($pub_after - $pub_before) * 100 / $seconds")" "$rss"
      stop_pair
    done
  done
done
bench_content typing 0.2
use this

echo
echo "## Bytes: HLS segments against the frames they carry (this build, written with --hls-dir)"
echo
start_pair --hls-dir "$work/hls"
sleep "$(smoke_or "$seconds" 8)"
stop_pair
dir="$work/hls/$session"
cat "$dir"/init-0.mp4 > "$work/all.mp4"
for segment in $(ls "$dir" | grep '^seg-' | sort -t- -k2 -n); do cat "$dir/$segment" >> "$work/all.mp4"; done
segment_bytes=$(( $(stat -c %s "$work/all.mp4") - $(stat -c %s "$dir/init-0.mp4") ))
read -r frames payload < <(ffprobe -v error -show_entries packet=size -of csv=p=0 "$work/all.mp4" | awk '{ n++; s += $1 } END { print n, s }')
websocket=$(( payload + frames * (48 + 24) ))
echo "| frames | payload bytes | as WebSocket messages | as HLS segments | HLS / payload | HLS / WebSocket |"
echo "|---:|---:|---:|---:|---:|---:|"
printf "| %s | %s | %s | %s | %.3f | %.3f |\n" "$frames" "$payload" "$websocket" "$segment_bytes" \
  "$(bc -l <<<"$segment_bytes / $payload")" "$(bc -l <<<"$segment_bytes / $websocket")"
