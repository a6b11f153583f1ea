#!/usr/bin/python3
"""What a person behind a viewer sees: how old the newest picture it holds is, sampled over time.

Reads `screensub --print-metadata --json` lines (one per video frame, with its wall-clock capture time, when it
was received — or its latency, from a screensub before that — and whether it was catch-up) and samples, every STEP seconds after the first SKIP, the age of the
newest picture received so far that was meant to be shown: a catch-up frame counts for nothing until the picture
it leads to (the run's last frame, not flagged) arrives. Also counts frames shown out of order: a picture older
than one already received.

    picture_age.py VIEWER.json [--skip 10] [--step 0.1] [--from MS --to MS] [--row LABEL]

Prints one JSON object: p50, p95 and worst age in ms, the number of samples, pictures and stale pictures; with
--row, a Markdown table row instead: LABEL | p50 | p95 | worst | pictures | stale.
"""
import json
import sys
from datetime import datetime


summary_stale = [0]  # what screensub's summary line counted: frames it left out as older than one it had


def shown_frames(path):
    """(received ms, captured ms) of each frame meant to be shown, in the order received."""
    out = []
    for line in open(path, errors="replace"):
        try:
            frame = json.loads(line)
        except ValueError:
            continue
        if frame.get("kind") == "summary":
            summary_stale[0] = frame.get("staleFrames", 0)
        if frame.get("kind") != "video" or frame.get("catchUp"):
            continue
        captured = datetime.fromisoformat(frame["wallClock"].replace("Z", "+00:00")).timestamp() * 1000
        # A screensub from before receivedAtMilliseconds: its latency is the same clock's arrival less capture.
        received = frame.get("receivedAtMilliseconds")
        if received is None and "latencyMilliseconds" in frame:
            received = captured + frame["latencyMilliseconds"]
        if received is not None:
            out.append((received, captured))
    return out


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))] if values else None


def ages(frames, skip=10.0, step=0.1, start=None, end=None):
    if not frames:
        return {"p50": None, "p95": None, "worst": None, "samples": 0, "pictures": 0, "stale": 0}
    first = frames[0][0] if start is None else start
    last = frames[-1][0] if end is None else end
    newest, index, samples, stale = None, 0, [], 0
    seen = None
    for _, captured in frames:
        if seen is not None and captured < seen:
            stale += 1
        seen = captured if seen is None else max(seen, captured)
    t = first + skip * 1000
    while t <= last:
        while index < len(frames) and frames[index][0] <= t:
            captured = frames[index][1]
            newest = captured if newest is None else max(newest, captured)
            index += 1
        if newest is not None:
            samples.append(t - newest)
        t += step * 1000
    return {"p50": percentile(samples, 0.5), "p95": percentile(samples, 0.95), "worst": max(samples) if samples else None,
            "samples": len(samples), "pictures": len(frames), "stale": stale + summary_stale[0]}


def main(argv):
    path = argv[1]
    options = dict(zip(argv[2::2], argv[3::2]))
    frames = shown_frames(path)
    result = ages(frames, skip=float(options.get("--skip", 10)), step=float(options.get("--step", 0.1)),
                  start=float(options["--from"]) if "--from" in options else None,
                  end=float(options["--to"]) if "--to" in options else None)
    if "--row" in options:
        shown = ["–" if result[key] is None else f"{result[key]:.0f}" for key in ("p50", "p95", "worst")]
        print(f"| {options['--row']} | {' | '.join(shown)} | {result['pictures']} | {result['stale']} |")
    else:
        print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv)
