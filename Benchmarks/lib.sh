# Shared by the benchmark scripts: `source Benchmarks/lib.sh`, then
#   bench_prepare [--bench]           installs what is missing (--bench: the benchmark's extras too) and sets work
#                                     (a temporary directory) and pids (processes to stop at exit);
#   bench_build [--bench] PRODUCT...  bench_prepare, then builds the
#                                     products (screenpub, screenrelay, screensub, and the benchmarks' own
#                                     screenbench and relaybench) in the one release build
#                                     (scripts/release-build.sh) and sets bin and benchbin (their directory);
#   bench_display SIZE                a virtual display of SIZE as $DISPLAY (a private Xvfb), stopped at exit;
#   bench_on_exit COMMAND             runs COMMAND at exit, before the display stops and $work is removed;
#   bench_relay BIN LOG [OPTION...]   a screenrelay from BIN on a port the kernel picks, as relay_pid, port and
#                                     server, logging to LOG (relay_launcher: a command it runs under, as taskset);
#   bench_setup SIZE                  all four products and a display (relay.sh, soak.sh, hls.sh, masks.sh);
#   bench_content CONTENT INTERVAL    screenbench draws CONTENT on $DISPLAY, a change every INTERVAL s, instead of
#                                     what it drew before; bench_content_stop stops it;
#   bench_base COMMIT                 a commit's release screenpub, screenrelay and screensub, built once into a
#                                     cache of their own (BENCH_BASE_DIR, default ~/.cache/screenpub-bench/COMMIT),
#                                     as base_bin: what a benchmark compares this commit with (with a static Swift
#                                     runtime, as this commit's release build: the same kind of binary);
#   smoke_or NORMAL SMOKE             NORMAL, or SMOKE in a smoke run: what a script's defaults are made of.
# Everything is stopped and removed on exit, whatever way the script ends.
#
# BENCH_SMOKE=1 is a smoke run (the tests make one of every script): the smallest screen, the fewest rows and a
# second or two of each measure, with the binaries in BENCH_BIN (the tests' own build) instead of a release
# build. It checks that the script runs to its end and prints its tables; its figures mean nothing.
smoke=${BENCH_SMOKE:-0}
smoke_or() { if [ "$smoke" = 1 ]; then echo "$2"; else echo "$1"; fi; }

bench_prepare() {
  scripts/install-deps.sh "$@"
  work=$(mktemp -d)
  pids=()
  bench_exits=()
  source scripts/virtual-display.sh
  trap bench_cleanup EXIT
}

bench_build() {
  local deps=()
  if [ "${1:-}" = --bench ]; then deps=(--bench); shift; fi
  bench_prepare "${deps[@]}"
  if [ "$smoke" = 1 ] && [ -n "${BENCH_BIN:-}" ]; then
    bin=$BENCH_BIN
  else
    bin=$(scripts/release-build.sh "$@")
  fi
  benchbin=$bin
}

bench_display() {
  stop_virtual_display
  unset DISPLAY
  start_virtual_display "$1"
}

bench_on_exit() {
  bench_exits=("$1" "${bench_exits[@]}")
}

# A port the kernel picks (--port 0, read back from the relay's log) rather than one drawn at random: the tests run
# every script at once, beside relays of their own, and a taken port ended a script without a word.
relay_launcher=()
bench_relay() {
  local binary=$1 log=$2 data
  shift 2
  data=$(mktemp -d "$work/relay-data.XXXXXX")
  local before=0
  if [ -f "$log" ]; then before=$(wc -l <"$log"); fi
  "${relay_launcher[@]}" "$binary/screenrelay" --port 0 --data-dir "$data" "$@" 2>>"$log" & relay_pid=$!
  pids+=("$relay_pid")
  port=""
  # (Up to 2 minutes: under valgrind, on a machine running every test, it takes a while.)
  for _ in $(seq 2400); do
    port=$(tail -n +"$((before + 1))" "$log" | grep -o 'listening on port [0-9]*' | head -1 | awk '{print $4}' || true)
    [ -n "$port" ] && break
    kill -0 "$relay_pid" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    echo "$(basename "$0"): screenrelay did not start; the end of its log:" >&2
    tail -n +"$((before + 1))" "$log" | tail -20 >&2
    exit 1
  fi
  server="http://127.0.0.1:$port"
  for _ in $(seq 100); do curl -sf "$server/healthz" >/dev/null && break; sleep 0.1; done
}

bench_setup() {
  bench_build screenpub screenrelay screenbench relaybench
  bench_display "$1"
}

bench_cleanup() {
  local command pid
  for command in "${bench_exits[@]}"; do eval "$command" || true; done
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  # Only these: a bare `wait` would also wait for the display, which is stopped after them.
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
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

bench_content_pid=""
bench_content() {
  bench_content_stop
  "$benchbin/screenbench" --display "$DISPLAY" --content "$1" --interval "$2" & bench_content_pid=$!
  pids+=("$bench_content_pid")
  sleep 1
}
bench_content_stop() {
  if [ -n "$bench_content_pid" ]; then kill "$bench_content_pid" 2>/dev/null || true; wait "$bench_content_pid" 2>/dev/null || true; fi
  bench_content_pid=""
}

bench_base() {
  local base_dir="${BENCH_BASE_DIR:-$HOME/.cache/screenpub-bench/$1}"
  base_bin="$base_dir/bin"
  [ -x "$base_bin/screenpub" ] && [ -x "$base_bin/screenrelay" ] && [ -x "$base_bin/screensub" ] && [ -e "$base_bin/.static" ] && return
  echo "building $1 (once) into $base_dir…" >&2
  rm -rf "$base_bin"
  rm -rf "$base_dir/src"
  mkdir -p "$base_dir"
  git worktree add --detach "$base_dir/src" "$1" >&2
  local product
  local flags=(-c release --static-swift-stdlib --package-path "$base_dir/src")
  for product in screenpub screenrelay screensub; do swift build "${flags[@]}" --product "$product" >&2; done
  mkdir -p "$base_bin"
  cp "$(swift build "${flags[@]}" --show-bin-path)"/{screenpub,screenrelay,screensub} "$base_bin/"
  touch "$base_bin/.static"
  git worktree remove --force "$base_dir/src" >&2 || true
}
