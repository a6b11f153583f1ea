#!/usr/bin/env bash
# The main job: build screenpub and share the screen to a relay started inside it, printing the viewer URL.
# It runs until Ctrl-C, or DURATION seconds when set; FPS (default 5) and PORT (default 8090) can be set too,
# and SCREENPUB_BIN_DIR to use screenpub from there rather than build it.
# Without a display it starts a virtual one with a clock, eyes and a moving pointer, so there is something
# to see.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# SCREENPUB_BIN_DIR: run screenpub from there (a package's /usr/bin, a build made elsewhere) instead of building.
if [ -n "${SCREENPUB_BIN_DIR:-}" ]; then
  bin=$SCREENPUB_BIN_DIR
else
  # The release build `make test` made for the .deb, when it is there: the same flags, nothing compiled again.
  bin=$(scripts/release-build.sh screenpub)
fi

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

port=${PORT:-8090}
echo "Sharing the screen at ${FPS:-5} fps. Open the viewer URL below in Chromium, Chrome, Edge or Firefox on this"
echo "machine (from another one: ssh -L $port:127.0.0.1:$port THIS-HOST, then open it there). Ctrl-C stops."
echo
# On the private Xvfb, capture it with X11 even if this shell sits in a Wayland session; otherwise let
# screenpub pick (the ScreenCast portal on Wayland, X11 elsewhere).
backend=()
[ -n "$VIRTUAL_DISPLAY_PID" ] && backend=(--backend x11)
"$bin/screenpub" --fps "${FPS:-5}" --port "$port" ${DURATION:+--duration "$DURATION"} "${backend[@]}"
