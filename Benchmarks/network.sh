#!/bin/bash
# screenpub on real, thin links: links shaped with tbf between network namespaces (DESIGN §10; this kernel has
# no netem), the same scenarios run with this commit and with a base commit (BENCH_BASE, default fa734f1: the
# last one before the stream adapted to its network), side by side. Needs root (network namespaces).
#
#   uplink       screenpub behind a 1 Mbit/s uplink, configured at 1500 kbit/s, 1080p text pages changing twice a
#                second, 5 fps, AV1; a viewer on the relay's machine.
#   drop         the same behind 2 Mbit/s that drops to 500 kbit/s at 20 s and comes back at 40 s.
#   slowviewer   screenpub and a fast viewer on the relay's machine, a second viewer behind 250 kbit/s.
#   narrowing    the same, the second viewer's link going 1 Mbit/s → 250 kbit/s at 20 s → 1 Mbit/s at 40 s.
#
# Each run's summary: the link's use and the fast viewer's p95 together after the first 10 s (uplink), and in the
# drop, the time from the drop until frames are back under 600 ms for good (recovery) with the use and p95 of the
# narrow 20 s; uplink and drop run BENCH_RUNS times (3), the others once, each version in turn.
#
# Per 10 s of each run: capture → arrival p50 and p95 (screensub's latency: both ends on one clock), change →
# arrival p95 (from when the newest change a frame shows was drawn: time held back before encoding counts), what was
# delivered against the link's rate, keyframes seen by the (fast) viewer, the slow viewer's frame rate and
# longest freeze, what the shaped link's queue dropped, and the CPU screenpub used (its controller included; the controller alone is measured by
# relaybench controller). Environment: BENCH_BASE (commit), BENCH_SECONDS (60), BENCH_SCENARIOS, BENCH_VERSIONS
# ("base this"), BENCH_KEEP (a directory that keeps each run's viewer JSON lines and logs), BENCH_PUBLISH_ARGS
# (more screenpub options, for both versions: e.g. "--temporal-layers 2"), BENCH_RELAY_ARGS (more screenrelay options:
# e.g. "--subscriber-fit-in 0"), BENCH_SLOW_KBPS (the slow viewer's link, 250), BENCH_RUNS (runs of uplink and drop, 3).
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh

if [ "$(id -u)" != 0 ]; then
  echo "network.sh: network namespaces need root; skipped" >&2
  exit 0
fi
bench_build screenpub screenrelay screensub relaybench screenbench
bench_display "$(smoke_or 1920x1080 640x360)"
base="${BENCH_BASE:-fa734f1}"
# (A smoke run: one scenario, this commit only, a dozen seconds: past the 10 s that picture ages leave out.)
seconds="${BENCH_SECONDS:-$(smoke_or 60 12)}"
scenarios="${BENCH_SCENARIOS:-$(smoke_or "uplink drop slowviewer narrowing" slowviewer)}"
versions="${BENCH_VERSIONS:-$(smoke_or "base this" this)}"
runs="${BENCH_RUNS:-$(smoke_or 3 1)}"
python=/usr/bin/python3
secret="network-bench-secret-that-is-32-bytes-long"

# The base commit's binaries, built once into a cache of their own.
if [[ " $versions " == *" base "* ]]; then bench_base "$base"; fi

# A namespace joined by a veth pair: 10.78.N.1 here, 10.78.N.2 inside.
make_namespace() { # NAME SUBNET
  ip netns add "$1"
  ip link add "$1h" type veth peer name "$1n"
  ip link set "$1n" netns "$1"
  ip addr add "10.78.$2.1/24" dev "$1h"
  ip link set "$1h" up
  ip netns exec "$1" ip addr add "10.78.$2.2/24" dev "$1n"
  ip netns exec "$1" ip link set "$1n" up
  ip netns exec "$1" ip link set lo up
  bench_on_exit "ip netns delete $1 2>/dev/null; ip link delete $1h 2>/dev/null"
}
# limit DEVICE KBPS [NAMESPACE]: tbf on DEVICE's egress, a 20 ms bucket, 500 ms of queue.
limit() {
  local burst=$(($2 * 1000 / 8 / 50)); [ "$burst" -lt 3000 ] && burst=3000
  if [ -n "${3:-}" ]; then
    ip netns exec "$3" tc qdisc replace dev "$1" root tbf rate "$2kbit" burst "$burst" latency 500ms
  else
    tc qdisc replace dev "$1" root tbf rate "$2kbit" burst "$burst" latency 500ms
  fi
}

# report NAME VIEWER_JSON LINK_KBPS [SLOW_JSON]: the table rows of one run.
report() {
  "$python" - "$@" <<'EOF'
import json, sys
name, viewer, link = sys.argv[1], sys.argv[2], sys.argv[3]
slow = sys.argv[4] if len(sys.argv) > 4 else None
def frames(path):
    out = []
    for line in open(path):
        try:
            f = json.loads(line)
        except ValueError:
            continue
        if f.get("kind") == "video" and "latencyMilliseconds" in f:
            out.append(f)
    return out
def windows(fs):
    if not fs: return []
    start = fs[0]["_arrival"]
    groups = {}
    for f in fs: groups.setdefault(int((f["_arrival"] - start) // 10000), []).append(f)
    return [groups[k] for k in sorted(groups)]
def arrival(f):
    from datetime import datetime
    capture = datetime.fromisoformat(f["wallClock"].replace("Z", "+00:00")).timestamp() * 1000
    return capture + f["latencyMilliseconds"]
def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")
fast = frames(viewer)
for f in fast: f["_arrival"] = arrival(f)
slowf = frames(slow) if slow else []
for f in slowf: f["_arrival"] = arrival(f)
# Change → arrival: from when the newest change a frame shows was on the screen (screenbench --changes-log, the
# same monotonic clock as capture times), so time a change waited in the encoder (frames held for the link)
# and for the next capture tick counts too.
import bisect, os
changes = sorted(int(l) for l in open(os.environ["CHANGES_LOG"]) if l.strip()) if os.environ.get("CHANGES_LOG") else []
def from_change(f):
    n, d = f["captureTime"].split("/")
    capture = int(n) * 10**9 // int(d)
    i = bisect.bisect_right(changes, capture) - 1
    return None if i < 0 else (capture - changes[i]) / 1e6 + f["latencyMilliseconds"]
def change_p95(group):
    values = [v for v in map(from_change, group) if v is not None]
    return f"{pct(values, .95):.0f}" if values else "–"
for index, group in enumerate(windows(fast)):
    lat = [f["latencyMilliseconds"] for f in group]
    kbps = sum(f["bytes"] for f in group) * 8 / 10 / 1000
    keys = sum(1 for f in group if f["keyframe"])
    row = f"| {name} | {index*10}–{index*10+10} s | {pct(lat, .5):.0f} | {pct(lat, .95):.0f} | {change_p95(group)} | {kbps:.0f} / {link} | {keys} |"
    if slow:
        sg = [f for f in slowf if group[0]["_arrival"] <= f["_arrival"] < group[0]["_arrival"] + 10000]
        gaps = [b["_arrival"] - a["_arrival"] for a, b in zip(sg, sg[1:])]
        row += f" {len(sg)/10:.1f} | {max(gaps) if gaps else float('nan'):.0f} | {pct([f['latencyMilliseconds'] for f in sg], .95):.0f} | {change_p95(sg)} |"
    else:
        row += " – | – | – | – |"
    print(row)
# One run's summary, added to SUMMARY_TO: without a drop, the link's use (of SUMMARY_KBPS) and p95 after the first
# 10 s; with one (DROP_MS and RESTORE_MS, wall clock), the use and p95 between the two and the recovery: from the
# drop until frames are under 600 ms for good.
if os.environ.get("SUMMARY_TO"):
    use_link = float(os.environ["SUMMARY_KBPS"])
    drop, restore = (float(os.environ[k]) if os.environ.get(k) else None for k in ("DROP_MS", "RESTORE_MS"))
    def use_and_p95(start, end):
        inside = [f for f in fast if start <= f["_arrival"] < end]
        if not inside or end <= start: return float("nan"), float("nan")
        return sum(f["bytes"] for f in inside) * 8 / (end - start) / use_link * 100, pct([f["latencyMilliseconds"] for f in inside], .95)
    if not fast:
        row = f"| {name} | – | – | – |"
    elif drop is None:
        use, p95 = use_and_p95(fast[0]["_arrival"] + 10000, fast[-1]["_arrival"])
        row = f"| {name} | {use:.0f} % | {p95:.0f} | – |"
    else:
        late = [f["_arrival"] for f in fast if drop <= f["_arrival"] < restore and f["latencyMilliseconds"] >= 600]
        use, p95 = use_and_p95(drop, restore)
        row = f"| {name} | {use:.0f} % | {p95:.0f} | {(max(late) - drop) / 1000 if late else 0:.1f} s |"
    with open(os.environ["SUMMARY_TO"], "a") as out: print(row, file=out)
EOF
}

# run VERSION SCENARIO RUN: one run with VERSION's binaries (this|base); prints its rows.
run() {
  local version=$1 scenario=$2 dir
  if [ "$version" = this ]; then dir=$bin; else dir=$base_bin; fi
  local ns="spnb$$" subnet=$((RANDOM % 200 + 20)) out="$work/$version-$scenario-$3"
  make_namespace "$ns" "$subnet"
  local here="10.78.$subnet.1"
  SCREENRELAY_SECRET=$secret "$dir/screenrelay" --host "$here" --port 0 --data-dir "$out-relay" --metrics-token "$secret" ${BENCH_RELAY_ARGS:-} 2>"$out-relay.log" & local relay=$!
  pids+=("$relay")
  local port=""
  for _ in $(seq 200); do
    port=$(grep -o 'listening on port [0-9]*' "$out-relay.log" | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && break; sleep 0.05
  done
  "$benchbin/screenbench" --display "$DISPLAY" --content pageflip --interval 0.5 --changes-log "$out-changes.log" & local scene=$!
  pids+=("$scene")
  local publish=(env SCREENRELAY_SECRET=$secret "$dir/screenpub" --display "$DISPLAY" --server "http://$here:$port" --fps 5 --codec av1
    --duration $((seconds + 10)) --control-socket "" ${BENCH_PUBLISH_ARGS:-})
  local link=1000
  case "$scenario" in
    uplink) limit "${ns}n" 1000 "$ns"; publish=(ip netns exec "$ns" "${publish[@]}" --bitrate 1500) ;;
    drop) link=2000; limit "${ns}n" 2000 "$ns"; publish=(ip netns exec "$ns" "${publish[@]}" --bitrate 1500) ;;
    slowviewer) link="∞"; limit "${ns}h" "${BENCH_SLOW_KBPS:-250}"; publish=("${publish[@]}" --bitrate 1000) ;;
    narrowing) link="∞"; limit "${ns}h" 1000; publish=("${publish[@]}" --bitrate 1000) ;;
  esac
  "${publish[@]}" >"$out-pub.out" 2>"$out-pub.log" & local pub=$!
  pids+=("$pub")
  local token=""
  for _ in $(seq 400); do
    token=$(grep -o 'token=[^ ]*' "$out-pub.out" | head -1 | cut -d= -f2 || true)
    [ -n "$token" ] && break; sleep 0.05
  done
  "$dir/screensub" --server "http://$here:$port" --token "$token" --print-metadata --json >"$out-fast.json" 2>/dev/null & local fast=$!
  pids+=("$fast")
  local slow=""
  if [ "$scenario" = slowviewer ] || [ "$scenario" = narrowing ]; then
    ip netns exec "$ns" "$dir/screensub" --server "http://$here:$port" --token "$token" --print-metadata --json >"$out-slow.json" 2>/dev/null & slow=$!
    pids+=("$slow")
  fi
  local cpu0; cpu0=$(cpu_seconds_of "$pub")
  local drop_ms="" restore_ms=""
  if [ "$scenario" = drop ]; then
    sleep 20; limit "${ns}n" 500 "$ns"; drop_ms=$(date +%s%3N)
    sleep 20; limit "${ns}n" 2000 "$ns"; restore_ms=$(date +%s%3N); sleep $((seconds - 40))
  elif [ "$scenario" = narrowing ]; then
    sleep 20; limit "${ns}h" 250; sleep 20; limit "${ns}h" 1000; sleep $((seconds - 40))
  else
    sleep "$seconds"
  fi
  local cpu; cpu=$(echo "$(cpu_seconds_of "$pub") - $cpu0" | bc -l)
  # What the shaped link's queue dropped (a burst that overflowed it is sent again, late).
  local shaped=(tc -s qdisc show dev "${ns}h")
  case "$scenario" in uplink|drop) shaped=(ip netns exec "$ns" tc -s qdisc show dev "${ns}n") ;; esac
  local drops; drops=$("${shaped[@]}" | awk '/Sent/ { gsub(/[(),]/, ""); print "dropped " $7 " of " $4 + $7 " packets" }')
  local relayed; relayed=$(curl -s -H "Authorization: Bearer $secret" "http://$here:$port/metrics" | awk '$1 ~ /^screenrelay_frames_(thinned|fitted_in)_total$/ { sub("screenrelay_frames_", "", $1); sub("_total", "", $1); printf "%s %s, ", $1, $2 }')
  kill "$fast" $slow "$pub" "$scene" "$relay" 2>/dev/null || true
  wait "$fast" $slow "$pub" "$scene" "$relay" 2>/dev/null || true
  ip netns delete "$ns" 2>/dev/null || true
  ip link delete "${ns}h" 2>/dev/null || true
  if [ -n "${BENCH_KEEP:-}" ]; then mkdir -p "$BENCH_KEEP" && cp "$out"-* "$BENCH_KEEP/" 2>/dev/null || true; fi
  # uplink and drop are summed up per run (report's SUMMARY_TO).
  local summary_to="" summary_kbps=$link name="$scenario ($version)"
  case "$scenario" in uplink|drop) summary_to="$work/summary.md"; name="$name run $3" ;; esac
  if [ "$scenario" = drop ]; then summary_kbps=500; fi
  SUMMARY_TO="$summary_to" SUMMARY_KBPS="$summary_kbps" DROP_MS="$drop_ms" RESTORE_MS="$restore_ms" CHANGES_LOG="$out-changes.log" \
    report "$name" "$out-fast.json" "$link" ${slow:+"$out-slow.json"}
  printf "| %s (%s) | screenpub CPU | %.1f %% of a core | relay: %s | shaped link: %s |\n" "$scenario" "$version" "$(echo "$cpu * 100 / $seconds" | bc -l)" "${relayed%, }" "$drops" >>"$work/cpu.md"
  # What a person sees: the newest picture each viewer held, sampled every 0.1 s after the first 10 s.
  local viewer
  for viewer in fast ${slow:+slow}; do
    "$python" Benchmarks/picture_age.py "$out-$viewer.json" --row "$scenario ($version) | $viewer" >>"$work/ages.md"
  done
}

echo "## Real networks: links shaped with tbf between network namespaces ($(date -u +%F), this commit $(git rev-parse --short HEAD) vs $base)"
echo
echo "| scenario (commit) | window | p50 ms | p95 ms | p95 from change ms | delivered kbit/s / link | keyframes (fast viewer) | slow viewer fps | slow longest freeze ms | slow p95 ms | slow p95 from change ms |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for scenario in $scenarios; do
  count=1
  case "$scenario" in uplink|drop) count=$runs ;; esac
  for index in $(seq "$count"); do
    for version in $versions; do run "$version" "$scenario" "$index"; done
  done
done
echo
if [ -s "$work/summary.md" ]; then
  echo "Each run of uplink and drop: the link's use and the fast viewer's capture → arrival p95 after the first 10 s (uplink, of 1 Mbit/s), and for the drop those of the narrow 20 s (of 500 kbit/s) and the recovery: from the drop until frames are under 600 ms for good:"
  echo
  echo "| scenario (commit) | link use | p95 ms | recovery |"
  echo "|---|---:|---:|---:|"
  cat "$work/summary.md"
  echo
fi
echo "The newest picture each viewer held, its age sampled every 0.1 s after the first 10 s (catch-up frames count for nothing until the picture they lead to is shown; Benchmarks/picture_age.py):"
echo
echo "| scenario (commit) | viewer | age p50 ms | age p95 ms | worst ms | pictures shown | stale (older than one it had) |"
echo "|---|---|---:|---:|---:|---:|---:|"
cat "$work/ages.md"
echo
cat "$work/cpu.md"
echo
echo "The uplink controller alone:"
"$benchbin/relaybench" controller
