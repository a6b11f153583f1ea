#!/usr/bin/python3
"""The attacks of a client holding only the tokens a relay hands out, each against a real screenrelay beside an
honest publisher and an honest viewer, with the relay's memory (RSS) and CPU reported for each, and what the
honest viewer saw (keyframes a minute, bit rate, control messages a second). Ends with SIGTERM while a viewer reads
nothing. Exits 1 when an attack took the relay past a documented bound (chaoslib.measure): `make test` runs it in
short form (CLITests/ChaosTests). The attacks without any token (request heads) are in Benchmarks/heads.py, those on
LL-HLS in Benchmarks/hls_attack.py.

Usage: Benchmarks/chaos.py [path/to/screenrelay] [seconds per attack, default 30]
       (default binary: the release build, .build/release/screenrelay)
"""
import sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
from chaoslib import *  # noqa: E402,F403  (the relay, its client, the honest pair, measure)
from chaos_seats import hello_flood, join_churn, property_spam, subscribe_churn  # noqa: E402

def nothing(*_):
    return "no attack"


def keyframe_spam(session_id, publisher_token, viewer_token, stream):
    spammer = Viewer(viewer_token, stream, spam=True)
    spammer.start()
    return lambda: f"spammer closed with {spammer.closed}" if spammer.closed else "spammer still connected"


def hls_big_frames(*_):
    # In a session of its own, whose HLS follows the attacker's stream; the honest pair is in another.
    session_id, publisher_token, viewer_token = session()
    def run():
        attacker = Publisher(publisher_token, delta=8 << 20, keyframe=8 << 20)
        attacker.keyframe_due = True
        attacker.start()
        end = time.time() + SECONDS - 1
        while time.time() < end:
            api("GET", f"/hls/{session_id}/index.m3u8?token={viewer_token}", bearer="")
            time.sleep(1)
        attacker.running = False
    threading.Thread(target=run, daemon=True).start()
    return "8 MiB frames twice a second while HLS is read"


def marker_flood(session_id, *_):
    counts = {"ok": 0, "refused": 0}
    def run():
        end = time.time() + SECONDS - 1
        while time.time() < end:
            status, _ = api("POST", f"/session/{session_id}/marker", {"id": f"m{counts['ok'] + counts['refused']}"})
            counts["ok" if status == 204 else "refused"] += 1
    threading.Thread(target=run, daemon=True).start()
    return lambda: f"markers accepted {counts['ok']}, refused {counts['refused']}"


def archive_cycle(session_id, *_):
    counts = {"started": 0, "refused": 0}
    def run():
        end = time.time() + SECONDS - 1
        while time.time() < end:
            status, body = api("POST", "/archive", {"sessionId": session_id})
            if status == 200:
                counts["started"] += 1
                api("POST", f"/archive/{json.loads(body)['id']}/stop")
            else:
                counts["refused"] += 1
    threading.Thread(target=run, daemon=True).start()
    return lambda: f"archives started {counts['started']}, refused {counts['refused']}"


def stream_flood(session_id, publisher_token, viewer_token, stream):
    published = 0
    sockets = []
    for _ in range(41):
        ws = WebSocket()
        ws.control({"type": "hello", "token": publisher_token})
        ws.receive()
        for _ in range(16):
            ws.control({"type": "publish", "name": "x" * 256, "properties": PROPERTIES})
        sockets.append(ws)
    time.sleep(2)
    joiner = WebSocket()
    joiner.control({"type": "hello", "token": viewer_token})
    welcome = joiner.receive()
    streams = len(json.loads(welcome)["streams"])
    return f"41 connections × 16 publishes: {streams} streams in the welcome, which is {len(welcome)} bytes"


print(f"screenrelay {BIN}, {SECONDS:.0f} s an attack")
for _ in range(100):
    try:
        urllib.request.urlopen(BASE + "/healthz")
        break
    except Exception:
        time.sleep(0.1)
measure("baseline", nothing)
measure("a viewer asks for a keyframe every 250 ms", keyframe_spam)
measure("HLS read, 8 MiB frames", hls_big_frames)
measure("markers as fast as they go", marker_flood)
measure("archive start/stop as fast as they go", archive_cycle)
measure("streams from one token on 41 connections", stream_flood)
measure("10 unread viewers cycle subscribe+catch-up", subscribe_churn)
measure("2000 hellos with one viewer link", hello_flood)
measure("join/leave churn on one viewer link", join_churn)
measure("publisher token spams stream changes", property_spam)
print(f"relay after the attacks: RSS {rss_mb():.1f} MB", flush=True)

# SIGTERM while a viewer of a live stream reads nothing.
session_id, publisher_token, viewer_token = session()
publisher = Publisher(publisher_token, delta=200_000)
publisher.start()
deaf = WebSocket()
deaf.control({"type": "hello", "token": viewer_token})
deaf.control({"type": "subscribe", "streamId": publisher.stream})
time.sleep(5)
t0 = time.time()
relay.send_signal(signal.SIGTERM)
try:
    relay.wait(timeout=120)
    print(f"SIGTERM with a viewer that reads nothing: exited {relay.returncode} after {time.time() - t0:.1f} s (--shutdown-grace 5)")
except subprocess.TimeoutExpired:
    print(f"SIGTERM with a viewer that reads nothing: still running after {time.time() - t0:.0f} s")
    FAILURES.append("SIGTERM: the relay did not exit within 120 s")
    relay.kill()
finish()
