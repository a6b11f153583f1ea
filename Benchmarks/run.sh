#!/usr/bin/env bash
# screenpub (AV1 and VP9) against ffmpeg x11grab + libvpx-vp9 on the same Xvfb content, one after the other in
# one run. Prints CPU seconds (user+sys), output bytes, frames, quality (SSIM against what was drawn), peak RSS
# and missed/dropped frames for each, and the screenpub/ffmpeg ratios. All run pinned to one core with one
# encoder thread at 1500 kbit/s CBR, without the pointer; VP9 with the same settings in both (realtime,
# speed 8, screen-content tuning), AV1 with screenpub's (libaom realtime, speed 10, screen tools).
#
#   BENCH_SECONDS  duration of each run (default 20)
#   BENCH_SIZE     screen size (default 1920x1080)
#   BENCH_SCENES   which scenes (default: all; e.g. "pageflip terminal")
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${BENCH_SECONDS:-$(smoke_or 20 3)}"
size="${BENCH_SIZE:-$(smoke_or 1920x1080 320x240)}"
bench_build screenpub screenbench
bench_display "$size"
core=$(( $(nproc) > 1 ? 1 : 0 ))


frames_of() {
  ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2>/dev/null || echo 0
}

# measure FPS TOOL OUT -> prints "cpu steady_cpu_percent rss bytes frames missed"; TOOL is av1, vp9 (screenpub)
# or ffmpeg. steady_cpu_percent leaves out the first $warmup seconds (start-up and the first keyframe).
warmup=$(smoke_or 3 1)
measure() {
  local fps=$1 tool=$2 out=$3
  local timing="$work/time" log="$work/log"
  rm -f "$out"
  if [ "$tool" = ffmpeg ]; then
    /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      ffmpeg -nostdin -hide_banner -y -f x11grab -draw_mouse 0 -framerate "$fps" -video_size "$size" -i "$DISPLAY" -t "$seconds" \
      -pix_fmt yuv420p -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -tune-content screen \
      -b:v 1500k -minrate 1500k -maxrate 1500k -threads 1 -row-mt 1 "$out" 2>"$log" &
  else
    /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      "$bin/screenpub" --codec "$tool" --fps "$fps" --duration "$seconds" --output "$out" --bitrate 1500 --threads 1 \
      --no-cursor 2>"$log" &
  fi
  local timer=$!
  sleep "$warmup"
  local child warm
  child=$(pgrep -P "$timer" | head -1)
  warm=$(cpu_seconds_of "$child")
  wait "$timer"
  if [ "$tool" = ffmpeg ]; then
    # ffmpeg's last progress line: "drop=N" counts frames it had to drop.
    missed=$(tr '\r' '\n' <"$log" | grep -o 'drop=[ ]*[0-9]*' | tail -1 | grep -o '[0-9]*$' || echo 0)
  else
    missed=$(grep -o '[0-9]* ticks missed' "$log" | grep -o '^[0-9]*' || echo "?")
  fi
  read -r user sys rss <"$timing"
  local cpu steady
  cpu=$(echo "$user + $sys" | bc -l)
  steady=$(echo "100 * ($cpu - $warm) / ($seconds - $warmup)" | bc -l)
  echo "$cpu $steady $rss $(stat -c %s "$out") $(frames_of "$out") ${missed:-0}"
}

ratio() { if [ "$(echo "$2 > 0" | bc -l)" = 1 ]; then printf "%.3f" "$(echo "$1 / $2" | bc -l)"; else echo "n/a"; fi; }

printf "screenpub (AV1, VP9) vs ffmpeg x11grab + libvpx-vp9, %s, %s s per run, one core (taskset -c %s), 1500 kbit/s, no pointer\n" "$size" "$seconds" "$core"
printf "SSIM: ffmpeg's ssim filter (All = Y, U, V by pixel count), each decoded frame against the picture its marker names, drawn again, weighted by how long the frame is shown\n\n"
printf "| scene | tool | CPU s | CPU %% of a core | steady CPU %% (after %s s) | output bytes | frames | missed/dropped | SSIM | SSIM Y | peak RSS MB |\n" "$warmup"
printf "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
summary=()
run_scene() {
  local name=$1 content=$2 interval=$3 fps=$4
  local -A row
  for tool in av1 vp9 ffmpeg; do
    local out="$work/$content-$fps-$tool.webm"
    bench_content "$content" "$interval"
    row[$tool]="$(measure "$fps" "$tool" "$out")"
    bench_content_stop
    row[$tool]="${row[$tool]} $(quality "$content" "$out" "$seconds")"
  done
  for tool in av1 vp9 ffmpeg; do
    set -- ${row[$tool]}
    local label="screenpub $tool"
    [ "$tool" = ffmpeg ] && label="ffmpeg vp9"
    printf "| %s | %s | %.2f | %.1f | %.2f | %d | %d | %s | %s | %s | %.1f |\n" "$name" "$label" "$1" "$(echo "100 * $1 / $seconds" | bc -l)" "$2" "$4" "$5" "$6" "$7" "$8" "$(echo "$3 / 1024" | bc -l)"
  done
  set -- ${row[ffmpeg]}
  local f_cpu=$1 f_steady=$2 f_rss=$3 f_bytes=$4 f_ssim=$7
  for tool in av1 vp9; do
    set -- ${row[$tool]}
    summary+=("| $name | $tool | $(ratio "$1" "$f_cpu") | $(ratio "$2" "$f_steady") | $(ratio "$4" "$f_bytes") | $7 vs $f_ssim | $(ratio "$3" "$f_rss") |")
  done
}
scenes="${BENCH_SCENES:-$(smoke_or "idle typing terminal pageflip terminal30" typing)}"
for scene in $scenes; do
  case "$scene" in
    idle) run_scene "idle desktop, 5 fps" idle 1 5 ;;
    typing) run_scene "typing (one line every 200 ms), 5 fps" typing 0.2 5 ;;
    terminal) run_scene "scrolling terminal (a line every 200 ms), 5 fps" terminal 0.2 5 ;;
    pageflip) run_scene "page flips (a new page every 1 s), 5 fps" pageflip 1 5 ;;
    terminal30) run_scene "scrolling terminal (a line every 200 ms), 30 fps" terminal 0.2 30 ;;
    *) echo "unknown scene $scene" >&2; exit 64 ;;
  esac
done
printf "\nRatios screenpub / ffmpeg (lower is better for screenpub; SSIM: higher is better):\n\n| scene | codec | CPU | steady CPU | bytes | SSIM (screenpub vs ffmpeg) | peak RSS |\n|---|---|---:|---:|---:|---:|---:|\n"
printf "%s\n" "${summary[@]}"
