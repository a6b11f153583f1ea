#!/usr/bin/env bash
# WHIP: the CPU screenpub adds by publishing into Janus (a real SFU, in a network namespace) beside a file, and
# the delay from a change on the screen to a viewer through Janus decoding it; then capture → display on the WHIP
# viewer page (packaging/whip-viewer, Chromium through Janus) beside the relay's viewer page, and the A/V offset of
# beeps and flashes where the WHIP page plays them. Needs root (ip netns).
#   Benchmarks/whip.sh [--seconds 20] [--fps 5]      BENCH_VIEWER_SECONDS (20), BENCH_BEEPS (20) for the viewers
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
bench_build screenpub screenrelay relaybench
echo "## WHIP into Janus: added CPU and capture → viewer delay"
if [ "$smoke" = 1 ] && [ $# = 0 ]; then set -- --seconds 3; fi
SCREENPUB_BIN_DIR="$bin" "$benchbin/relaybench" whip "$@"
echo
echo "## WHIP viewer page beside the relay's viewer: capture → display, and A/V through Janus"
SCREENPUB_BIN_DIR="$bin" "$benchbin/relaybench" whip-viewer --seconds "${BENCH_VIEWER_SECONDS:-$(smoke_or 20 4)}" --beeps "${BENCH_BEEPS:-$(smoke_or 20 3)}"
