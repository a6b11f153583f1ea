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
