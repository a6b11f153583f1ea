#!/usr/bin/env bash
# 4:2:0 against 4:4:4 on coloured text (screenbench --content colour: syntax-highlighted code on a dark background,
# red, green, blue and black words on a light one, coloured buttons and links; a line rewritten every 0.5 s), and
# the evidence behind `--chroma auto`.
#
#  1. screenpub AV1 and VP9, each in 4:2:0 and 4:4:4, beside ffmpeg x11grab + libvpx-vp9 in yuv420p and
#     yuv444p (realtime, speed 8, screen tuning), all pinned to one core with one encoder thread at
#     1500 kbit/s, 5 fps, no pointer: CPU, bytes, peak RSS, and quality compared in 4:4:4 (what was drawn, read
#     back, against each decoded frame, time-weighted): SSIM of Y, U, V, and PSNR of U and V, which sees thin
#     coloured strokes that SSIM's 8×8 windows average away.
#  2. A bit-rate sweep of screenpub 4:2:0 and 4:4:4 on the coloured text (does 4:4:4 cost the luma its bytes at
#     low rates?) and, at 1500 kbit/s, the scenes where 4:4:4 has least to give: page flips and a terminal
#     scrolling at 30 fps (CPU, ticks missed).
#
#   BENCH_SECONDS  duration of each run (default 15)
#   BENCH_SIZE     screen size (default 1920x1080)
#   BENCH_SWEEP    bit rates of the sweep, kbit/s (default "300 700 1500 3000"); "" skips part 2
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${BENCH_SECONDS:-$(smoke_or 15 3)}"
size="${BENCH_SIZE:-$(smoke_or 1920x1080 320x240)}"
bench_build screenpub screenbench
bench_display "$size"
core=$(( $(nproc) > 1 ? 1 : 0 ))
warmup=$(smoke_or 3 1)


# record TOOL CHROMA FPS KBPS OUT -> "cpu steady_cpu_percent rss_kb bytes missed"; TOOL is av1, vp9 or ffmpeg.
record() {
  local tool=$1 chroma=$2 fps=$3 kbps=$4 out=$5
  local timing="$work/time" log="$work/log"
  rm -f "$out"
  if [ "$tool" = ffmpeg ]; then
    /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      ffmpeg -nostdin -hide_banner -y -f x11grab -draw_mouse 0 -framerate "$fps" -video_size "$size" -i "$DISPLAY" -t "$seconds" \
      -pix_fmt "yuv${chroma}p" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -tune-content screen \
      -b:v "${kbps}k" -minrate "${kbps}k" -maxrate "${kbps}k" -threads 1 -row-mt 1 "$out" 2>"$log" &
  else
    /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      "$bin/screenpub" --codec "$tool" --chroma "$chroma" --fps "$fps" --duration "$seconds" --output "$out" --bitrate "$kbps" \
      --threads 1 --no-cursor --control-socket "" 2>"$log" &
  fi
  local timer=$! child warm
  sleep "$warmup"
  child=$(pgrep -P "$timer" | head -1)
  warm=$(cpu_seconds_of "$child")
  wait "$timer" || true
  local missed
  if [ "$tool" = ffmpeg ]; then
    missed=$(tr '\r' '\n' <"$log" | grep -o 'drop=[ ]*[0-9]*' | tail -1 | grep -o '[0-9]*$' || echo 0)
  else
    missed=$(grep -o '[0-9]* ticks missed' "$log" | grep -o '^[0-9]*' || echo 0)
  fi
  local user sys rss
  read -r user sys rss <"$timing"
  local cpu
  cpu=$(echo "$user + $sys" | bc -l)
  echo "$cpu $(echo "100 * ($cpu - $warm) / ($seconds - $warmup)" | bc -l) $rss $(stat -c %s "$out") ${missed:-0}"
}

# full_quality CONTENT OUT -> "ssim ssim_y ssim_u ssim_v psnr_u psnr_v", compared in 4:4:4.
full_quality() {
  local line
  line=$("$benchbin/screenbench" --display "$DISPLAY" --content "$1" --quality "$2" --duration "$seconds" --full-colour 2>/dev/null || true)
  local field out=""
  for field in ssim ssim_y ssim_u ssim_v psnr_u psnr_v; do
    out="$out $(echo "$line" | grep -o "\b$field=[0-9.na]*" | cut -d= -f2)"
  done
  echo "$out"
}

ratio() { if [ "$(echo "$2 > 0" | bc -l)" = 1 ]; then printf "%.2f" "$(echo "$1 / $2" | bc -l)"; else echo "n/a"; fi; }

printf "Coloured text, %s, 5 fps, %s s per run, one core (taskset -c %s), one encoder thread, 1500 kbit/s, no pointer\n" "$size" "$seconds" "$core"
printf "Quality compared in 4:4:4 against what was drawn (time-weighted over the frames shown)\n\n"
printf "| tool | chroma | CPU s | steady CPU %% | bytes | SSIM | SSIM Y | SSIM U | SSIM V | PSNR U dB | PSNR V dB | peak RSS MB |\n"
printf "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
declare -A rows=()
for tool in av1 vp9 ffmpeg; do
  for chroma in 420 444; do
    out="$work/colour-$tool-$chroma.webm"
    bench_content colour 0.5
    measured=$(record "$tool" "$chroma" 5 1500 "$out")
    bench_content_stop
    set -- $measured $(full_quality colour "$out")
    rows[$tool-$chroma]="$*"
    label="screenpub $tool"; [ "$tool" = ffmpeg ] && label="ffmpeg libvpx-vp9"
    printf "| %s | %s | %.2f | %.1f | %d | %s | %s | %s | %s | %s | %s | %.1f |\n" "$label" "$chroma" "$1" "$2" "$4" "$6" "$7" "$8" "$9" "${10}" "${11}" "$(echo "$3 / 1024" | bc -l)"
  done
done
printf "\n4:4:4 / 4:2:0 of the same tool (CPU, bytes; PSNR U: the difference in dB)\n\n| tool | CPU | bytes | PSNR U gain dB | SSIM Y 4:2:0 → 4:4:4 |\n|---|---:|---:|---:|---|\n"
for tool in av1 vp9 ffmpeg; do
  set -- ${rows[$tool-420]}; c420=$1 b420=$4 y420=$7 u420=${10}
  set -- ${rows[$tool-444]}
  printf "| %s | %s | %s | %.1f | %s → %s |\n" "$tool" "$(ratio "$1" "$c420")" "$(ratio "$4" "$b420")" "$(echo "${10} - $u420" | bc -l)" "$y420" "$7"
done

sweep="${BENCH_SWEEP-$(smoke_or "300 700 1500 3000" 1500)}"
[ -z "$sweep" ] && exit 0
printf "\nWhere 4:4:4 pays: screenpub, one core, one thread\n\n| scene | fps | codec | kbit/s | chroma | steady CPU %% | ticks missed | bytes | SSIM Y | SSIM U | PSNR U dB |\n|---|---:|---|---:|---|---:|---:|---:|---:|---:|---:|\n"
sweep_row() {
  local name=$1 content=$2 interval=$3 fps=$4 codec=$5 kbps=$6 chroma=$7
  local out="$work/sweep-$content-$fps-$codec-$kbps-$chroma.webm"
  bench_content "$content" "$interval"
  local measured
  measured=$(record "$codec" "$chroma" "$fps" "$kbps" "$out")
  bench_content_stop
  set -- $measured $(full_quality "$content" "$out")
  printf "| %s | %s | %s | %s | %s | %.1f | %s | %d | %s | %s | %s |\n" "$name" "$fps" "$codec" "$kbps" "$chroma" "$2" "$5" "$4" "$7" "$8" "${10}"
}
for codec in av1 vp9; do
  for kbps in $sweep; do
    for chroma in 420 444; do sweep_row "coloured text" colour 0.5 5 "$codec" "$kbps" "$chroma"; done
  done
done
for chroma in 420 444; do sweep_row "page flips (1 s)" pageflip 1 5 av1 1500 "$chroma"; done
for chroma in 420 444; do sweep_row "terminal scrolling every frame" terminal 0.033 30 vp9 1500 "$chroma"; done
