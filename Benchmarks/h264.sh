#!/usr/bin/env bash
# H.264 in screenpub, measured:
#  1. the library: the benchmark scenes captured as I420 at SIZE, 5 fps, each encoded by openh264 (screenpub's
#     settings: screen content, rate held by skipping frames, Constrained Baseline) and by libx264 (veryfast,
#     zerolatency, CBR, High) alone, one thread on one core: encode CPU per frame, bytes, frames skipped, SSIM of
#     what a viewer sees (a skipped frame shows the one before it) and peak RSS — the evidence for openh264;
#  2. screenpub --codec h264 beside av1 and vp9 and ffmpeg x11grab + libx264 with the same settings, on the same
#     Xvfb content at 1500 kbit/s: CPU % of a core, peak RSS, bytes, SSIM (files with H.264 measured through a
#     lossless VP9 copy, so that one decoder path judges every tool);
#  3. the second rendition: a share in AV1 through screenrelay, its publisher's and relay's CPU % of a core
#     without a viewer that needs H.264, while one watches, and after it left; how long the rendition outlives
#     the last such viewer; and the first-picture time of JOINS such viewers, each joining after the rendition
#     stopped (the encoder starts for it), p50 / p95 / max.
#
#   BENCH_SECONDS  seconds per run (default 20); BENCH_SIZE (default 1920x1080); BENCH_RATES parts 1's rates
#   (default "700 1500 3000"); BENCH_SCENES (default "terminal:0.2 typing:0.2 pageflip:1 colour:1");
#   BENCH_JOINS (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds=${BENCH_SECONDS:-$(smoke_or 20 2)}
size=${BENCH_SIZE:-$(smoke_or 1920x1080 320x240)}
width=${size%x*} height=${size#*x}
rates=${BENCH_RATES:-$(smoke_or "700 1500 3000" 1500)}
scenes=${BENCH_SCENES:-$(smoke_or "terminal:0.2 typing:0.2 pageflip:1 colour:1" "terminal:0.2")}
joins=${BENCH_JOINS:-$(smoke_or 5 1)}
bench_build --bench screenpub screenrelay screensub screenbench
bench_display "$size"
core=$(( $(nproc) > 1 ? 1 : 0 ))
frames=$(( seconds * 5 ))
frame_bytes=$(( width * height * 3 / 2 ))

echo "== H.264: $size, 5 fps, $seconds s a run, $(nproc) cores; openh264 $(dpkg-query -W -f '${Version}' libopenh264-7 2>/dev/null), x264 $(dpkg-query -W -f '${Version}' libx264-164 2>/dev/null)"

# ssim_raw A.yuv B.yuv -> the SSIM of two I420 sequences of this size.
ssim_raw() {
  ffmpeg -nostdin -hide_banner -f rawvideo -video_size "$size" -pix_fmt yuv420p -framerate 5 -i "$1" \
    -f rawvideo -video_size "$size" -pix_fmt yuv420p -framerate 5 -i "$2" -lavfi "[0:v][1:v]ssim" -f null - 2>&1 \
    | grep -o 'All:[0-9.]*' | cut -d: -f2
}

# shown STREAM.264 SKIPS OUT.yuv: what a viewer sees of a stream, frame by frame (a skipped frame: the one before).
shown() {
  ffmpeg -nostdin -v error -y -f h264 -i "$1" -f rawvideo -pix_fmt yuv420p "$work/decoded.yuv"
  /usr/bin/python3 - "$work/decoded.yuv" "$2" "$3" "$frames" "$frame_bytes" <<'PY'
import sys
decoded, skips, out, frames, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
skipped = {int(line) for line in open(skips) if line.strip()}
with open(decoded, "rb") as source, open(out, "wb") as sink:
    last = None
    for index in range(frames):
        if index not in skipped or last is None:
            picture = source.read(size)
            if len(picture) == size:
                last = picture
        if last is not None:
            sink.write(last)
PY
}

printf "\n1. The library, each alone on one core: encode CPU per frame, bytes, skipped frames, SSIM as shown, peak RSS\n\n"
printf "| scene | library | kbit/s | ms per frame | bytes | skipped | SSIM | RSS (MB) |\n|---|---|---:|---:|---:|---:|---:|---:|\n"
cc -O2 -o "$work/x264-probe" Benchmarks/h264probe/x264-probe.c -lx264
cc -O2 -o "$work/openh264-probe" Benchmarks/h264probe/openh264-probe.c -lopenh264
for scene in $scenes; do
  content=${scene%%:*}
  bench_content "$content" "${scene##*:}"
  ffmpeg -nostdin -loglevel error -y -f x11grab -draw_mouse 0 -framerate 5 -video_size "$size" -i "$DISPLAY" -t "$seconds" \
    -pix_fmt yuv420p -f rawvideo "$work/$content.yuv"
  bench_content_stop
  for kbps in $rates; do
    for library in openh264 x264; do
      : >"$work/skips"
      if [ "$library" = x264 ]; then
        line=$(taskset -c "$core" "$work/x264-probe" "$width" "$height" 5 "$kbps" "$work/$content.yuv" "$work/out.264" veryfast)
      else
        line=$(taskset -c "$core" "$work/openh264-probe" "$width" "$height" 5 "$kbps" "$work/$content.yuv" "$work/out.264" "$work/skips")
      fi
      field() { echo "$line" | grep -o "$1=[0-9.]*" | cut -d= -f2; }
      shown "$work/out.264" "$work/skips" "$work/shown.yuv"
      printf "| %s | %s | %s | %.1f | %s | %s | %s | %.0f |\n" "$content" "$library" "$kbps" \
        "$(echo "1000 * $(field cpu) / $(field frames)" | bc -l)" "$(field bytes)" "$(field skipped)" \
        "$(ssim_raw "$work/shown.yuv" "$work/$content.yuv")" "$(echo "$(field rss_kb) / 1024" | bc -l)"
    done
  done
  rm -f "$work/$content.yuv" "$work/shown.yuv" "$work/decoded.yuv"
done

printf "\n2. screenpub --codec h264 beside AV1, VP9 and ffmpeg x11grab + libx264 (veryfast, zerolatency, CBR), 1500 kbit/s, one thread on one core\n\n"
printf "| scene | tool | CPU %% of a core | peak RSS (MB) | bytes | SSIM |\n|---|---|---:|---:|---:|---:|\n"
# record TOOL OUT -> "cpu_percent rss_kb": $seconds s of the content.
record() {
  local tool=$1 out=$2
  if [ "$tool" = ffmpeg-x264 ]; then
    /usr/bin/time -o "$work/time" -f "%U %S %M" taskset -c "$core" ffmpeg -nostdin -hide_banner -loglevel error -y -f x11grab \
      -draw_mouse 0 -framerate 5 -video_size "$size" -i "$DISPLAY" -t "$seconds" -pix_fmt yuv420p -c:v libx264 -preset veryfast \
      -tune zerolatency -b:v 1500k -maxrate 1500k -bufsize 1500k -threads 1 -g 100000 "$out" >/dev/null 2>&1
  else
    /usr/bin/time -o "$work/time" -f "%U %S %M" taskset -c "$core" "$bin/screenpub" --codec "$tool" --fps 5 --duration "$seconds" \
      --output "$out" --bitrate 1500 --threads 1 --no-cursor --control-socket "" >/dev/null 2>&1
  fi
  read -r user system rss <"$work/time"
  echo "$(echo "100 * ($user + $system) / $seconds" | bc -l) $rss"
}
for scene in $scenes; do
  content=${scene%%:*}
  for tool in h264 av1 vp9 ffmpeg-x264; do
    case $tool in h264 | ffmpeg-x264) out="$work/$content-$tool.mkv" ;; *) out="$work/$content-$tool.webm" ;; esac
    bench_content "$content" "${scene##*:}"
    read -r cpu rss < <(record "$tool" "$out")
    bench_content_stop
    measured=$out
    if [ "${out##*.}" = mkv ]; then
      # Judged through a lossless VP9 copy (the same pictures), by the same quality pass as the WebM files.
      measured="$work/$content-$tool-lossless.webm"
      ffmpeg -nostdin -loglevel error -y -i "$out" -c:v libvpx-vp9 -lossless 1 -deadline realtime -cpu-used 8 -row-mt 1 "$measured"
    fi
    read -r ssim _ < <(quality "$content" "$measured" "$seconds")
    printf "| %s | %s | %.1f | %.0f | %d | %s |\n" "$content" "$tool" "$cpu" "$(echo "$rss / 1024" | bc -l)" "$(stat -c %s "$out")" "$ssim"
  done
done

printf "\n3. The H.264 rendition of an AV1 share through screenrelay (typing at 5 fps)\n\n"
export SCREENRELAY_SECRET
SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)
bench_relay "$bin" "$work/relay.log"
bench_content typing 0.2
"$bin/screenpub" --server "$server" --fps 5 --codec av1 --no-cursor --control-socket "" >"$work/pub.out" 2>"$work/pub.log" & pub_pid=$!
pids+=("$pub_pid")
viewer=""
for _ in $(seq 100); do viewer=$(grep '^viewer:' "$work/pub.out" 2>/dev/null | awk '{print $2}' || true); [ -n "$viewer" ] && break; sleep 0.1; done
if [ -z "$viewer" ]; then
  echo "h264.sh: screenpub printed no viewer link within 10 s; the end of its log:" >&2
  tail -20 "$work/pub.log" >&2
  exit 1
fi
token=${viewer##*token=}
# cpu_over PID SECONDS -> CPU % of a core over the next SECONDS.
cpu_over() { local before after; before=$(cpu_seconds_of "$1"); sleep "$2"; after=$(cpu_seconds_of "$1"); echo "100 * ($after - $before) / $2" | bc -l; }
phase_seconds=$(smoke_or 15 2)
sleep 2
read -r pub_before relay_before < <(echo "$(cpu_over "$pub_pid" "$phase_seconds") $(cpu_seconds_of "$relay_pid")")
relay_before=$(echo "100 * ($(cpu_seconds_of "$relay_pid") - $relay_before) / $phase_seconds" | bc -l)
timeout $(( phase_seconds + 30 )) "$bin/screensub" --server "$server" --token "$token" --decodes-only avc1.42 --no-decode \
  --count 100000 >/dev/null 2>&1 & watcher=$!
sleep 3
relay_start=$(cpu_seconds_of "$relay_pid")
pub_during=$(cpu_over "$pub_pid" "$phase_seconds")
relay_during=$(echo "100 * ($(cpu_seconds_of "$relay_pid") - $relay_start) / $phase_seconds" | bc -l)
# (It may have ended already: a kill that finds nothing is no failure.)
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true
left=$(date +%s.%N)
stopped=""
for _ in $(seq 300); do
  if grep -q "stopped the h264 rendition" "$work/pub.log"; then stopped=$(date +%s.%N); break; fi
  sleep 0.1
done
relay_start=$(cpu_seconds_of "$relay_pid")
pub_after=$(cpu_over "$pub_pid" "$phase_seconds")
relay_after=$(echo "100 * ($(cpu_seconds_of "$relay_pid") - $relay_start) / $phase_seconds" | bc -l)
printf "| phase | screenpub CPU %% of a core | screenrelay CPU %% of a core |\n|---|---:|---:|\n"
printf "| AV1 only | %.1f | %.1f |\n| AV1 + the H.264 rendition (one viewer needs it) | %.1f | %.1f |\n| after it stopped | %.1f | %.1f |\n" \
  "$pub_before" "$relay_before" "$pub_during" "$relay_during" "$pub_after" "$relay_after"
if [ -n "$stopped" ]; then
  printf "\nThe rendition stopped %.1f s after its last viewer left (the relay's linger: 10 s).\n" "$(echo "$stopped - $left" | bc -l)"
else
  printf "\nThe rendition did not stop within 30 s of its last viewer leaving.\n"
fi
# First pictures: each viewer joins once the rendition has stopped, so that its encoder starts for it.
firsts=()
for join in $(seq "$joins"); do
  before=$(grep -c "stopped the h264 rendition" "$work/pub.log" || true)
  started=$(date +%s.%N)
  timeout 20 "$bin/screensub" --server "$server" --token "$token" --decodes-only avc1.42 --count 1 >/dev/null 2>&1 || true
  firsts+=("$(echo "$(date +%s.%N) - $started" | bc -l)")
  for _ in $(seq 300); do [ "$(grep -c "stopped the h264 rendition" "$work/pub.log" || true)" -gt "$before" ] && break; sleep 0.1; done
done
printf "First picture of a viewer that needs H.264, the encoder starting for it (%d joins, screensub's start included): %s\n" "$joins" \
  "$(printf "%s\n" "${firsts[@]}" | sort -g | awk '{ v[NR] = $1 } END { printf "p50 %.2f s, p95 %.2f s, max %.2f s", v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], v[NR] }')"
kill -TERM "$pub_pid" "$relay_pid" 2>/dev/null || true
