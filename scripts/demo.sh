#!/usr/bin/env bash
# The main job: build screenpub and record the screen to out/share.webm for DURATION seconds (default 10).
# Without a display it starts a virtual one with a clock, eyes and a moving pointer, so there is something
# to see. Then it shows what ffprobe and screensub read from the file.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product screenpub >&2
swift build -c release --product screensub >&2
bin=$(swift build -c release --show-bin-path)

source scripts/virtual-display.sh
start_virtual_display 1920x1080
helpers=()
cleanup() {
  for pid in "${helpers[@]}"; do kill "$pid" 2>/dev/null || true; done
  stop_virtual_display
}
trap cleanup EXIT
if [ -n "$VIRTUAL_DISPLAY_PID" ]; then
  xclock -update 1 -geometry 400x400+200+150 & helpers+=($!)
  xeyes -geometry 300x200+800+300 & helpers+=($!)
  ( while true; do
      for x in 300 700 1100 1500; do xdotool mousemove "$x" 600 2>/dev/null; sleep 0.5; done
    done ) & helpers+=($!)
  sleep 1
fi

mkdir -p out
"$bin/screenpub" --output out/share.webm --overwrite --duration "${DURATION:-10}" --fps "${FPS:-5}"
echo
echo "ffprobe reads out/share.webm as:"
ffprobe -v error -count_frames -select_streams v:0 \
  -show_entries stream=codec_name,width,height,nb_read_frames -show_entries format=duration,size -of default=nw=1 out/share.webm
echo
"$bin/screensub" --input out/share.webm --print-metadata | head -n 12
echo
echo "Play it with: mpv out/share.webm   (or open it in Chromium)"
