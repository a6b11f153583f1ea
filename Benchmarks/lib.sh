# Shared by the benchmark scripts that run screenpub and screenrelay on a virtual display (relay.sh, soak.sh):
# `source Benchmarks/lib.sh; bench_setup WIDTHxHEIGHT` installs what is missing, builds the release products,
# starts Xvfb, and sets bin, benchbin (their directories), work (a temporary directory) and pids (processes
# to stop); everything is stopped and removed on exit.
bench_setup() {
  scripts/install-deps.sh
  for product in screenpub screenrelay; do swift build -c release --product "$product" >&2; done
  for product in screenbench relaybench; do swift build -c release --package-path Benchmarks --product "$product" >&2; done
  bin=$(swift build -c release --show-bin-path)
  benchbin=$(swift build -c release --package-path Benchmarks --show-bin-path)
  work=$(mktemp -d)
  unset DISPLAY
  source scripts/virtual-display.sh
  start_virtual_display "$1"
  pids=()
  trap bench_cleanup EXIT
}

bench_cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  stop_virtual_display
  rm -rf "$work"
}

# CPU seconds (user+sys) a process has used so far, from /proc.
cpu_seconds_of() {
  local fields
  read -r -a fields <"/proc/$1/stat" || { echo 0; return; }
  echo "(${fields[13]} + ${fields[14]}) / $(getconf CLK_TCK)" | bc -l
}

# quality CONTENT FILE SECONDS -> "ssim ssim_y": a WebM recording of screenbench's CONTENT against the content's
# steps drawn again on $DISPLAY, time-weighted over SECONDS (screenbench --quality); needs $benchbin.
quality() {
  local line
  line=$("$benchbin/screenbench" --display "$DISPLAY" --content "$1" --quality "$2" --duration "$3" 2>/dev/null || true)
  echo "$(echo "$line" | grep -o 'ssim=[0-9.na]*' | cut -d= -f2) $(echo "$line" | grep -o 'ssim_y=[0-9.na]*' | cut -d= -f2)"
}
