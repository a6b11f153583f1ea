#!/usr/bin/env bash
# The evidence behind `--codec auto`: AV1 and VP9 in screenpub on text that changes on every tick (a terminal
# scrolling a line per frame: the encoder's worst case), at the sizes and rates people share, each pinned to
# one core with one encoder thread at 1500 kbit/s. Prints CPU (% of a core, steady state), ticks missed
# (the encoder could not keep up), bytes and time-weighted SSIM.
#
#   BENCH_SECONDS  duration of each run (default 12)
#   BENCH_SIZES    screen sizes (default "1280x720 1920x1080 2560x1440"); "" skips the first table
#   BENCH_RATES    frame rates (default "5 15 30")
#   BENCH_SWEEP    bit rates of the sweep, kbit/s (default "300 700 1500 3000"); "" skips it
#
# Then a bit-rate sweep at 1920x1080, 5 fps, on the scrolling terminal and on page flips, for screenpub's AV1 and
# VP9 and for ffmpeg x11grab + libvpx-vp9 (4:2:0, realtime, speed 8, screen tuning): bytes and SSIM at each rate,
# and the bytes each screenpub codec needs for the SSIM ffmpeg reaches at 1500 kbit/s (interpolated between the
# sweep's points): bytes at equal quality, not only at equal bit-rate targets.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${BENCH_SECONDS:-$(smoke_or 12 3)}"
bench_build screenpub screenbench
content_pid=""
bench_on_exit '[ -n "$content_pid" ] && kill "$content_pid" 2>/dev/null'
unset DISPLAY
core=$(( $(nproc) > 1 ? 1 : 0 ))
warmup=$(smoke_or 3 1)

printf "screenpub --codec av1 vs vp9 on a terminal scrolling one line per frame, %s s per run, one core, 1500 kbit/s\n\n" "$seconds"
printf "| size | fps | codec | steady CPU %% of a core | ticks missed | bytes | SSIM | SSIM Y |\n"
printf "|---|---:|---|---:|---:|---:|---:|---:|\n"
for size in ${BENCH_SIZES-$(smoke_or "1280x720 1920x1080 2560x1440" 320x240)}; do
  start_virtual_display "$size" 2>/dev/null
  for fps in ${BENCH_RATES:-$(smoke_or "5 15 30" 5)}; do
    interval=$(echo "1 / $fps" | bc -l)
    for codec in av1 vp9; do
      out="$work/$size-$fps-$codec.webm"
      "$benchbin/screenbench" --display "$DISPLAY" --content terminal --interval "$interval" & content_pid=$!
      sleep 1
      taskset -c "$core" "$bin/screenpub" --codec "$codec" --fps "$fps" --duration "$seconds" --output "$out" \
        --bitrate 1500 --threads 1 --no-cursor 2>"$work/log" & pid=$!
      sleep "$warmup"
      warm=$(cpu_seconds_of "$pid")
      sleep $(( seconds - warmup - 1 ))
      last=$(cpu_seconds_of "$pid")
      wait "$pid" || true
      kill "$content_pid" 2>/dev/null || true; wait "$content_pid" 2>/dev/null || true; content_pid=""
      steady=$(echo "100 * ($last - $warm) / ($seconds - $warmup - 1)" | bc -l)
      missed=$(grep -o '[0-9]* ticks missed' "$work/log" | grep -o '^[0-9]*' || echo "?")
      read -r ssim ssim_y < <(quality terminal "$out" "$seconds")
      printf "| %s | %s | %s | %.1f | %s | %d | %s | %s |\n" "$size" "$fps" "$codec" "$steady" "$missed" "$(stat -c %s "$out")" "$ssim" "$ssim_y"
    done
  done
  stop_virtual_display
done

sweep="${BENCH_SWEEP-$(smoke_or "300 700 1500 3000" 1500)}"
[ -z "$sweep" ] && exit 0
sweep_seconds=$(smoke_or 20 2)
sweep_size=$(smoke_or 1920x1080 320x240)
# record TOOL KBPS OUT: $sweep_seconds s of the content at 5 fps.
record() {
  local tool=$1 kbps=$2 out=$3
  if [ "$tool" = ffmpeg ]; then
    taskset -c "$core" ffmpeg -nostdin -hide_banner -y -f x11grab -draw_mouse 0 -framerate 5 -video_size "$sweep_size" \
      -i "$DISPLAY" -t "$sweep_seconds" -pix_fmt yuv420p -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -tune-content screen \
      -b:v "${kbps}k" -minrate "${kbps}k" -maxrate "${kbps}k" -threads 1 -row-mt 1 "$out" 2>/dev/null
  else
    taskset -c "$core" "$bin/screenpub" --codec "$tool" --fps 5 --duration "$sweep_seconds" --output "$out" --bitrate "$kbps" \
      --threads 1 --no-cursor 2>/dev/null
  fi
}
start_virtual_display "$sweep_size" 2>/dev/null
printf "\nBit-rate sweep, $sweep_size, 5 fps, $sweep_seconds s per run: bytes and SSIM\n\n| scene | tool | kbit/s | bytes | SSIM | SSIM Y |\n|---|---|---:|---:|---:|---:|\n"
matched=()
for scene in terminal:0.2 pageflip:1; do
  content=${scene%%:*} interval=${scene##*:}
  declare -A points=()
  for tool in av1 vp9 ffmpeg; do
    for kbps in $sweep; do
      out="$work/sweep-$content-$tool-$kbps.webm"
      "$benchbin/screenbench" --display "$DISPLAY" --content "$content" --interval "$interval" & content_pid=$!
      sleep 1
      record "$tool" "$kbps" "$out"
      kill "$content_pid" 2>/dev/null || true; wait "$content_pid" 2>/dev/null || true; content_pid=""
      read -r ssim ssim_y < <(quality "$content" "$out" "$sweep_seconds")
      bytes=$(stat -c %s "$out")
      points[$tool]="${points[$tool]:-} $ssim:$bytes"
      printf "| %s | %s | %s | %d | %s | %s |\n" "$content" "$tool" "$kbps" "$bytes" "$ssim" "$ssim_y"
    done
  done
  target=$(echo "${points[ffmpeg]}" | tr ' ' '\n' | grep -v '^$' | awk -F: -v n="$(echo $sweep | wc -w)" -v want=1500 -v rates="$sweep" \
    'BEGIN { split(rates, r, " ") } { if (r[NR] == want) print $1 }')
  for tool in av1 vp9; do
    # The bytes at which the tool's SSIM reaches ffmpeg's at 1500 kbit/s, between the two sweep points around it.
    needed=$(echo "${points[$tool]}" | tr ' ' '\n' | grep -v '^$' | sort -t: -k1,1g | awk -F: -v t="$target" '
      { s[NR] = $1; b[NR] = $2 }
      END {
        if (t == "" || NR == 0) { print "n/a"; exit }
        if (t <= s[1]) { printf "≤ %d", b[1]; exit }
        for (i = 2; i <= NR; i++) if (t <= s[i]) { printf "%d", b[i-1] + (b[i] - b[i-1]) * (t - s[i-1]) / (s[i] - s[i-1]); exit }
        printf "> %d", b[NR]
      }')
    ffmpeg_bytes=$(stat -c %s "$work/sweep-$content-ffmpeg-1500.webm" 2>/dev/null || echo 0)
    matched+=("| $content | $tool | $target | $needed | $ffmpeg_bytes |")
  done
  unset points
done
printf "\nBytes at equal quality (the SSIM ffmpeg reaches at 1500 kbit/s):\n\n| scene | screenpub codec | SSIM | screenpub bytes | ffmpeg bytes |\n|---|---|---:|---:|---:|\n"
printf "%s\n" "${matched[@]}"
