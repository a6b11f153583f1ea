#!/usr/bin/env bash
# screenpub against GStreamer (pipewiresrc → videorate → videoconvert → vp9enc → webmmux) capturing the same
# PipeWire video node, one after the other. The node is a private PipeWire's (screenbench --pipewire) sending
# whole new 1080p frames, as a compositor does for a playing video (a busy screen), or one frame a second
# (close to an idle one: a real compositor then sends nothing). Both run pinned to one core with one
# encoder thread at 1500 kbit/s CBR: screenpub with its default codec (--codec auto: AV1 up to 10 fps, VP9
# above), GStreamer with VP9 realtime speed 8.
# Then the same on a real compositor's node: GNOME's mutter headless (screenbench --mutter), which sends a new
# buffer for every change and no damage metadata, with a ticking clock (a 16×16 block moving once a second),
# with and without a pointer moving 20 times a second (embedded in the picture by mutter).
#
#   BENCH_SECONDS   duration of each run (default 20)
#   BENCH_SIZE      frame size (default 1920x1080)
#   BENCH_BASELINE  another screenpub binary measured beside this one on mutter, e.g. one built from the commit
#                   before the tile comparison: git worktree add /tmp/base f3870b1^ &&
#                   (cd /tmp/base && swift build -c release --product screenpub) → /tmp/base/.build/release/screenpub
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
seconds="${BENCH_SECONDS:-$(smoke_or 20 2)}"
size="${BENCH_SIZE:-$(smoke_or 1920x1080 320x240)}"
bench_build --bench screenpub screenbench relaybench
producer_pid=""
bench_on_exit '[ -n "$producer_pid" ] && kill "$producer_pid" 2>/dev/null && wait "$producer_pid" 2>/dev/null' 
core=$(( $(nproc) > 1 ? 1 : 0 ))

# start_producer FPS: a private PipeWire with a node sending FPS frames a second; sets runtime and node.
# start_producer mutter [--moving-pointer]: mutter's screen cast instead.
start_producer() {
  [ -n "$producer_pid" ] && kill "$producer_pid" 2>/dev/null && wait "$producer_pid" 2>/dev/null || true
  if [ "$1" = mutter ]; then
    "$benchbin/screenbench" --mutter "$size" "${@:2}" >"$work/producer" & producer_pid=$!
  else
    "$benchbin/screenbench" --pipewire "$size" --producer-fps "$1" >"$work/producer" & producer_pid=$!
  fi
  for _ in $(seq 300); do grep -q node= "$work/producer" 2>/dev/null && break; sleep 0.1; done
  runtime=$(sed -n 's/^runtime=\([^ ]*\) .*/\1/p' "$work/producer")
  node=$(sed -n 's/.* node=\([0-9]*\)$/\1/p' "$work/producer")
  [ -n "$node" ] || { echo "the PipeWire producer did not start" >&2; exit 1; }
}

frames_of() {
  ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=nb_read_frames -of csv=p=0 "$1" 2>/dev/null || echo 0
}

# GStreamer ends after the node's frames of $seconds (num-buffers: an EOS of its own; a SIGINT would not reach
# it from inside a process substitution, where bash starts it with SIGINT ignored).
# measure FPS TOOL PRODUCER_FPS -> prints "cpu rss bytes frames" (TOOL: screenpub, baseline or gstreamer;
# PRODUCER_FPS 0: a node that sends buffers only on change, which GStreamer is stopped after $seconds)
measure() {
  local fps=$1 tool=$2 producer_fps=$3
  local out="$work/$tool-$fps.webm" timing="$work/time" program="$bin/screenpub"
  rm -f "$out"
  [ "$tool" = baseline ] && program="$BENCH_BASELINE"
  if [ "$tool" != gstreamer ]; then
    XDG_RUNTIME_DIR="$runtime" PIPEWIRE_RUNTIME_DIR="$runtime" /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      "$program" --pipewire-node "$node" --fps "$fps" --duration "$seconds" --output "$out" --bitrate 1500 --threads 1 \
      --keepalive 0 --control-socket "$work/control.sock" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
  elif [ "$producer_fps" = 0 ]; then
    # SIGINT, which gst-launch -e turns into an end of stream (a finished file, a normal exit whose CPU time
    # counts): this runs in the foreground (run_mutter), where SIGINT is not ignored.
    XDG_RUNTIME_DIR="$runtime" PIPEWIRE_RUNTIME_DIR="$runtime" /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      timeout -s INT -k 10 "$seconds" gst-launch-1.0 -q -e \
      pipewiresrc path="$node" do-timestamp=true ! videorate ! "video/x-raw,framerate=$fps/1" \
      ! videoconvert ! vp9enc deadline=1 cpu-used=8 end-usage=cbr target-bitrate=1500000 threads=1 ! webmmux \
      ! filesink location="$out" >"$work/log" 2>&1 || true
    [ -s "$out" ] || { echo "GStreamer wrote nothing:" >&2; tail -5 "$work/log" >&2; }
  else
    XDG_RUNTIME_DIR="$runtime" PIPEWIRE_RUNTIME_DIR="$runtime" /usr/bin/time -f "%U %S %M" -o "$timing" taskset -c "$core" \
      timeout -s KILL $((seconds + 20)) gst-launch-1.0 -q -e \
      pipewiresrc path="$node" do-timestamp=true num-buffers=$((producer_fps * seconds)) ! videorate ! "video/x-raw,framerate=$fps/1" \
      ! videoconvert ! vp9enc deadline=1 cpu-used=8 end-usage=cbr target-bitrate=1500000 threads=1 ! webmmux \
      ! filesink location="$out" >"$work/log" 2>&1 || true
    [ -s "$out" ] || { echo "GStreamer wrote nothing:" >&2; tail -5 "$work/log" >&2; }
  fi
  read -r user sys rss < <(tail -1 "$timing")
  echo "$(echo "$user + $sys" | bc -l) $rss $(stat -c %s "$out" 2>/dev/null || echo 0) $(frames_of "$out")"
}

ratio() { if [ "$(echo "$2 > 0" | bc -l)" = 1 ]; then printf "%.3f" "$(echo "$1 / $2" | bc -l)"; else echo "n/a"; fi; }

printf "screenpub (--codec auto) vs GStreamer pipewiresrc (VP9 speed 8), %s, %s s per run, one core (taskset -c %s), 1500 kbit/s\n\n" "$size" "$seconds" "$core"
printf "| scenario | tool | CPU s | CPU %% of a core | output bytes | frames | peak RSS MB |\n|---|---|---:|---:|---:|---:|---:|\n"
summary=()
run_scenario() {
  local name=$1 producer_fps=$2 fps=$3
  start_producer "$producer_fps"
  read -r s_cpu s_rss s_bytes s_frames < <(measure "$fps" screenpub "$producer_fps")
  read -r g_cpu g_rss g_bytes g_frames < <(measure "$fps" gstreamer "$producer_fps")
  for row in "screenpub $s_cpu $s_rss $s_bytes $s_frames" "gstreamer $g_cpu $g_rss $g_bytes $g_frames"; do
    set -- $row
    printf "| %s | %s | %.2f | %.1f | %d | %d | %.1f |\n" "$name" "$1" "$2" "$(echo "100 * $2 / $seconds" | bc -l)" "$4" "$5" "$(echo "$3 / 1024" | bc -l)"
  done
  summary+=("| $name | $(ratio "$s_cpu" "$g_cpu") | $(ratio "$s_bytes" "$g_bytes") | $(ratio "$s_rss" "$g_rss") |")
}
run_scenario "node sends 30 fps, captured at 5 fps" 30 5
# (A smoke run: one of each.)
if [ "$smoke" != 1 ]; then
  run_scenario "node sends 30 fps, captured at 30 fps" 30 30
  run_scenario "node sends 1 fps (nearly idle), captured at 5 fps" 1 5
fi

printf "\nRatios screenpub / GStreamer (lower is better for screenpub):\n\n| scenario | CPU | bytes | peak RSS |\n|---|---:|---:|---:|\n"
printf "%s\n" "${summary[@]}"
# The tile comparison that finds what changed when the node sends no damage metadata (as mutter), against the
# whole-picture conversion it can spare.
printf "\n"
"$benchbin/relaybench" tiles --size "$size"

# mutter: one row per tool, the baseline binary beside this one when given.
run_mutter() {
  local name=$1 fps=$2
  local tools=(screenpub gstreamer)
  [ -n "${BENCH_BASELINE:-}" ] && tools=(screenpub baseline gstreamer)
  declare -A cpu
  for tool in "${tools[@]}"; do
    measure "$fps" "$tool" 0 >"$work/result"
    read -r t_cpu t_rss t_bytes t_frames <"$work/result"
    cpu[$tool]=$t_cpu
    printf "| %s | %s | %.2f | %.1f | %d | %d | %.1f |\n" "$name" "$tool" "$t_cpu" "$(echo "100 * $t_cpu / $seconds" | bc -l)" "$t_bytes" "$t_frames" "$(echo "$t_rss / 1024" | bc -l)"
  done
  summary+=("| $name | $(ratio "${cpu[screenpub]}" "${cpu[gstreamer]}") | ${BENCH_BASELINE:+$(ratio "${cpu[screenpub]}" "${cpu[baseline]}")} |")
}
summary=()
printf "\nmutter --headless %s: a ticking clock, the pointer embedded (screenbench --mutter)\n\n" "$size"
printf "| scenario | tool | CPU s | CPU %% of a core | output bytes | frames | peak RSS MB |\n|---|---|---:|---:|---:|---:|---:|\n"
start_producer mutter
run_mutter "clock, captured at 5 fps" 5
if [ "$smoke" != 1 ]; then
  run_mutter "clock, captured at 30 fps" 30
  start_producer mutter --moving-pointer
  run_mutter "clock and moving pointer, 5 fps" 5
  run_mutter "clock and moving pointer, 30 fps" 30
fi
printf "\nCPU ratios on mutter (lower is better for screenpub):\n\n| scenario | screenpub / GStreamer | screenpub / baseline |\n|---|---:|---:|\n"
printf "%s\n" "${summary[@]}"
