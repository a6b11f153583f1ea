# Sourced by the demo and the benchmark: starts a private Xvfb when there is no usable $DISPLAY.
# Sets DISPLAY and VIRTUAL_DISPLAY_PID (empty when a real display is used); stop_virtual_display ends it.

start_virtual_display() {
  local size="${1:-1920x1080}"
  if [ -n "${DISPLAY:-}" ] && xdpyinfo >/dev/null 2>&1; then
    VIRTUAL_DISPLAY_PID=""
    return
  fi
  local fifo
  fifo=$(mktemp -u)
  mkfifo "$fifo"
  Xvfb -displayfd 3 -screen 0 "${size}x24" -nolisten tcp -noreset 3>"$fifo" >/dev/null 2>&1 &
  VIRTUAL_DISPLAY_PID=$!
  local number
  read -r -t 10 number <"$fifo"
  rm -f "$fifo"
  export DISPLAY=":$number"
  echo "started a virtual display $DISPLAY (${size})" >&2
}

stop_virtual_display() {
  if [ -n "${VIRTUAL_DISPLAY_PID:-}" ]; then
    kill "$VIRTUAL_DISPLAY_PID" 2>/dev/null || true
    wait "$VIRTUAL_DISPLAY_PID" 2>/dev/null || true
  fi
}
