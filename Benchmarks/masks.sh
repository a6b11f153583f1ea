#!/usr/bin/env bash
# What privacy masks cost: screenpub (default codec, 5 fps, one core, 1500 kbit/s) on the same Xvfb content
# without masks, with `--mask-window` hiding a ticking xclock (its window covered, its second hand changing
# under the cover every second), and with a pixelated `--mask-region` over a quarter of the screen.
#
#   BENCH_SECONDS  duration of each run (default 20)
#   BENCH_SIZE     screen size (default 1920x1080)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${BENCH_SECONDS:-$(smoke_or 20 3)}"
size="${BENCH_SIZE:-$(smoke_or 1920x1080 320x240)}"
bench_setup "$size"
core=$(( $(nproc) > 1 ? 1 : 0 ))
warmup=$(smoke_or 3 1)

# measure ARGS… -> "cpu steady_cpu_percent frames": screenpub with ARGS for $seconds on $DISPLAY.
measure() {
  local out="$work/masks.webm" timing="$work/time"
  rm -f "$out"
  /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
    "$bin/screenpub" --fps 5 --duration "$seconds" --output "$out" --bitrate 1500 --threads 1 --no-cursor \
    --control-socket "$work/control.sock" "$@" 2>"$work/log" &
  local timer=$!
  sleep "$warmup"
  local warm
  warm=$(cpu_seconds_of "$(pgrep -P "$timer" | head -1)")
  wait "$timer" || { cat "$work/log" >&2; exit 1; }
  read -r user sys _ <"$timing"
  local cpu
  cpu=$(echo "$user + $sys" | bc -l)
  echo "$cpu $(echo "100 * ($cpu - $warm) / ($seconds - $warmup)" | bc -l) $(grep -o '[0-9]* frames (' "$work/log" | grep -o '^[0-9]*')"
}

printf "Privacy masks: screenpub at 5 fps, %s, %s s per run, one core (taskset -c %s)\n\n" "$size" "$seconds" "$core"
printf "| content | masks | CPU s | steady CPU %% | frames | CPU against no masks |\n|---|---|---:|---:|---:|---:|\n"
xclock -geometry 300x300+1500+60 -update 1 & pids+=($!)
sleep 1
for content in $(smoke_or "idle typing" typing); do
  "$benchbin/screenbench" --display "$DISPLAY" --content "$content" --interval 0.2 & scene=$!
  sleep 1
  # The scene's window covers the screen; the clock is raised above it.
  xdotool search --class xclock windowraise >/dev/null 2>&1 || true
  baseline=""
  for variant in none window region; do
    case $variant in
      none) args=(); label="none" ;;
      window) args=(--mask-window xclock); label="--mask-window xclock (a ticking clock hidden)" ;;
      region) args=(--mask-region "0,0,$(( ${size%x*} / 2 )),$(( ${size#*x} / 2 ))" --mask-style pixelate); label="--mask-region, a quarter, pixelated" ;;
    esac
    read -r cpu steady frames < <(measure "${args[@]}")
    [ -z "$baseline" ] && baseline=$cpu
    printf "| %s | %s | %.2f | %.2f | %s | %.2f |\n" "$content" "$label" "$cpu" "$steady" "$frames" "$(echo "$cpu / $baseline" | bc -l)"
  done
  kill "$scene" 2>/dev/null || true; wait "$scene" 2>/dev/null || true
done
