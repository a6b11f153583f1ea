#!/usr/bin/env bash
# Soak: screenrelay for an hour under a 30 fps publisher and 20 subscribers, 5 of which stall (subscribe, then
# never read), with the relay's resident memory sampled every minute. It passes when, after the warm-up, the
# memory stays within ±5 % of its mean: nothing piles up for the stalled viewers or leaks per frame.
#
#   Benchmarks/soak.sh                       1 h (SOAK_SECONDS=3600), samples every 60 s, 5 min warm-up
#   SOAK_SECONDS=600 SOAK_WARMUP=120 SOAK_SAMPLE=20 Benchmarks/soak.sh   a shorter one
#
# The publisher replays a recording of scrolling text (made here with screenpub on Xvfb); the honest
# subscribers' delivery (missing frames) is printed at the end with the relay's CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${SOAK_SECONDS:-$(smoke_or 3600 4)}"
warmup="${SOAK_WARMUP:-$(smoke_or 300 1)}"
sample="${SOAK_SAMPLE:-$(smoke_or 60 1)}"
bench_setup "$(smoke_or 1280x720 320x240)"

# 10 s of scrolling text at 30 fps, the publisher's material.
"$benchbin/screenbench" --display "$DISPLAY" --content terminal --interval 0.033 & content_pid=$!
pids+=("$content_pid")
sleep 1
"$bin/screenpub" --display "$DISPLAY" --fps 30 --output "$work/text.webm" --duration "$(smoke_or 10 2)" --no-cursor 2>/dev/null
kill "$content_pid" 2>/dev/null || true

export SCREENRELAY_SECRET
SCREENRELAY_SECRET=$(head -c 32 /dev/urandom | base64)
bench_relay "$bin" "$work/relay.log"

echo "## Soak: ${seconds} s, 30 fps publisher, 15 reading + 5 stalled subscribers, relay RSS every ${sample} s"
echo
"$benchbin/relaybench" fanout --server "$server" --secret "$SCREENRELAY_SECRET" --recording "$work/text.webm" \
  --subscribers 15 --stalled 5 --fps 30 --seconds "$seconds" --relay-pid "$relay_pid" \
  --sample-every "$sample" --warm-up "$warmup" | tee "$work/soak.txt"
verdict=$(grep -Eo "within ±[0-9.]+%" "$work/soak.txt" | grep -Eo "[0-9.]+" || echo 100)
if [ "$(echo "$verdict <= 5" | bc)" = 1 ]; then
  echo "soak: PASS (relay memory flat within ±${verdict}% after warm-up)"
else
  echo "soak: FAIL (relay memory moved ±${verdict}% after warm-up)"
  # (A smoke run's few seconds say nothing of memory: it only checks that the soak runs.)
  [ "$smoke" = 1 ] || exit 1
fi
