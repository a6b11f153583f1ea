#!/usr/bin/env bash
# screenpub's sound (--audio) with real parts: a private PipeWire and wireplumber, a test source playing
# silence, then music, then a beep a second painted as a white flash on Xvfb at the same instant; the release
# screenpub capturing it with its embedded relay; a subscriber (relaybench audio) decoding sound and pictures.
# Prints the audio thread's CPU and bytes per minute (silence, music), capture → arrival latency through the
# relay, and the audio − video offset of every beep and its flash (p50/p99).
#
#   BENCH_SECONDS  seconds per phase of silence and music (default 30); BENCH_BEEPS  beeps (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
bench_build screenpub relaybench
echo "== sound: $(nproc) cores, Opus 64 kbit/s stereo, 20 ms frames, FEC and DTX"
"$benchbin/relaybench" audio --screenpub "$bin/screenpub" --phase-seconds "${BENCH_SECONDS:-$(smoke_or 30 2)}" --beeps "${BENCH_BEEPS:-$(smoke_or 60 3)}"
