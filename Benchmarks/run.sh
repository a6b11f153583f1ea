#!/usr/bin/env bash
# screenpub against ffmpeg x11grab + libvpx-vp9 on the same Xvfb content, one after the other in one run.
# Prints CPU seconds (user+sys), output bytes, frames, peak RSS and missed/dropped frames for each, and the
# screenpub/ffmpeg ratios. Both run pinned to one core with one encoder thread and the same VP9 settings
# (realtime, speed 8, screen-content tuning, 1500 kbit/s CBR).
#
#   BENCH_SECONDS  duration of each run (default 20)
#   BENCH_SIZE     screen size (default 1920x1080)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${BENCH_SECONDS:-20}"
size="${BENCH_SIZE:-1920x1080}"
scripts/install-deps.sh
swift build -c release --product screenpub >&2
swift build -c release --package-path Benchmarks --product screenbench >&2
bin=$(swift build -c release --show-bin-path)
benchbin=$(swift build -c release --package-path Benchmarks --show-bin-path)
work=$(mktemp -d)
unset DISPLAY
source scripts/virtual-display.sh
start_virtual_display "$size"
content_pid=""
cleanup() {
  [ -n "$content_pid" ] && kill "$content_pid" 2>/dev/null || true
  stop_virtual_display
  rm -rf "$work"
}
trap cleanup EXIT
core=$(( $(nproc) > 1 ? 1 : 0 ))

start_content() {
  [ -n "$content_pid" ] && kill "$content_pid" 2>/dev/null && wait "$content_pid" 2>/dev/null || true
  "$benchbin/screenbench" --display "$DISPLAY" --content "$1" --interval "$2" & content_pid=$!
  sleep 1
}

frames_of() {
  ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2>/dev/null || echo 0
}

# CPU seconds (user+sys) a process has used so far, from /proc.
cpu_seconds_of() {
  local fields
  read -r -a fields <"/proc/$1/stat" || { echo 0; return; }
  echo "(${fields[13]} + ${fields[14]}) / $(getconf CLK_TCK)" | bc -l
}

# measure FPS TOOL -> prints "cpu steady_cpu_percent rss bytes frames missed"
# steady_cpu_percent leaves out the first $warmup seconds (start-up and the first keyframe).
warmup=3
measure() {
  local fps=$1 tool=$2
  local out="$work/$tool-$fps.webm" timing="$work/time" log="$work/log"
  rm -f "$out"
  if [ "$tool" = screenpub ]; then
    /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      "$bin/screenpub" --fps "$fps" --duration "$seconds" --output "$out" --bitrate 1500 --threads 1 2>"$log" &
  else
    /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      ffmpeg -nostdin -hide_banner -y -f x11grab -framerate "$fps" -video_size "$size" -i "$DISPLAY" -t "$seconds" \
      -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -tune-content screen -b:v 1500k -minrate 1500k -maxrate 1500k \
      -threads 1 -row-mt 1 "$out" 2>"$log" &
  fi
  local timer=$!
  sleep "$warmup"
  local child warm
  child=$(pgrep -P "$timer" | head -1)
  warm=$(cpu_seconds_of "$child")
  wait "$timer"
  if [ "$tool" = screenpub ]; then
    missed=$(grep -o '[0-9]* ticks missed' "$log" | grep -o '^[0-9]*' || echo "?")
  else
    # ffmpeg's last progress line: "drop=N" counts frames it had to drop.
    missed=$(tr '\r' '\n' <"$log" | grep -o 'drop=[ ]*[0-9]*' | tail -1 | grep -o '[0-9]*$' || echo 0)
  fi
  read -r user sys rss <"$timing"
  local cpu steady
  cpu=$(echo "$user + $sys" | bc -l)
  steady=$(echo "100 * ($cpu - $warm) / ($seconds - $warmup)" | bc -l)
  echo "$cpu $steady $rss $(stat -c %s "$out") $(frames_of "$out") ${missed:-0}"
}

ratio() { if [ "$(echo "$2 > 0" | bc -l)" = 1 ]; then printf "%.3f" "$(echo "$1 / $2" | bc -l)"; else echo "n/a"; fi; }

printf "screenpub vs ffmpeg x11grab, %s, %s s per run, one core (taskset -c %s), VP9 speed 8 screen tuning 1500 kbit/s\n\n" "$size" "$seconds" "$core"
printf "| scenario | tool | CPU s | CPU %% of a core | steady CPU %% (after %s s) | output bytes | frames | missed/dropped | peak RSS MB |\n" "$warmup"
printf "|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
summary=()
run_scenario() {
  local name=$1 content=$2 interval=$3 fps=$4
  start_content "$content" "$interval"
  read -r s_cpu s_steady s_rss s_bytes s_frames s_missed < <(measure "$fps" screenpub)
  read -r f_cpu f_steady f_rss f_bytes f_frames f_missed < <(measure "$fps" ffmpeg)
  for row in "screenpub $s_cpu $s_steady $s_rss $s_bytes $s_frames $s_missed" "ffmpeg $f_cpu $f_steady $f_rss $f_bytes $f_frames $f_missed"; do
    set -- $row
    printf "| %s | %s | %.2f | %.1f | %.2f | %d | %d | %s | %.1f |\n" "$name" "$1" "$2" "$(echo "100 * $2 / $seconds" | bc -l)" "$3" "$5" "$6" "$7" "$(echo "$4 / 1024" | bc -l)"
  done
  summary+=("| $name | $(ratio "$s_cpu" "$f_cpu") | $(ratio "$s_steady" "$f_steady") | $(ratio "$s_bytes" "$f_bytes") | $(ratio "$s_rss" "$f_rss") |")
}
run_scenario "idle desktop, 5 fps" typing 1000000 5
run_scenario "text changing every 200 ms, 5 fps" terminal 0.2 5
run_scenario "text changing every 200 ms, 30 fps" terminal 0.2 30
run_scenario "typing (one line every 200 ms), 5 fps" typing 0.2 5
printf "\nRatios screenpub / ffmpeg (lower is better for screenpub):\n\n| scenario | CPU | steady CPU | bytes | peak RSS |\n|---|---:|---:|---:|---:|\n"
printf "%s\n" "${summary[@]}"
