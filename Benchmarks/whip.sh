#!/usr/bin/env bash
# WHIP: the CPU screenpub adds by publishing into Janus (a real SFU, in a network namespace) beside a file, and
# the delay from a change on the screen to a viewer through Janus decoding it. Needs root (ip netns).
#   Benchmarks/whip.sh [--seconds 20] [--fps 5]
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
bench_build screenpub relaybench
echo "## WHIP into Janus: added CPU and capture → viewer delay"
if [ "$smoke" = 1 ] && [ $# = 0 ]; then set -- --seconds 3; fi
SCREENPUB_BIN_DIR="$bin" "$benchbin/relaybench" whip "$@"
