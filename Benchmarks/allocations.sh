#!/usr/bin/env bash
# Heap allocations per frame on screenpub's capture thread (capture → convert → encode → WebM), by the library
# that called the allocator. Two recordings of the same changing content, short and long; the difference
# divided by the difference in frames is the per-frame cost, free of start-up allocations.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
bench_build screenpub screenbench
gcc -O2 -shared -fPIC Benchmarks/malloc-count.c -o "$work/malloc-count.so" -ldl
size=$(smoke_or 1920x1080 320x240)
bench_display "$size"
"$benchbin/screenbench" --display "$DISPLAY" --content typing --interval 0.2 & pids+=($!)
sleep 1
run() {
  MALLOC_COUNT_THREAD=screenpub-cap LD_PRELOAD="$work/malloc-count.so" \
    "$bin/screenpub" --output "$work/out-$1.webm" --duration "$1" 2>"$work/log-$1" || true
  grep -o '[0-9]* changed ticks captured' "$work/log-$1" | grep -o '^[0-9]*'
}
short=$(smoke_or 4 2) long=$(smoke_or 14 4)
short_frames=$(run "$short")
long_frames=$(run "$long")
frames=$((long_frames - short_frames))
echo "allocations per changed frame on the capture thread ($size, one text line changing every 200 ms, $frames frames):"
echo
echo "| allocating library | per frame |"
echo "|---|---:|"
join <(grep '^malloc-count-by' "$work/log-$short" | awk '{print $2, $3}' | sort) \
     <(grep '^malloc-count-by' "$work/log-$long" | awk '{print $2, $3}' | sort) |
  awk -v frames="$frames" '{ printf "| %s | %.2f |\n", $1, ($3 - $2) / frames }'
