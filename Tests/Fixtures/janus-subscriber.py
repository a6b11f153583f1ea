#!/usr/bin/python3
"""A viewer of a Janus VideoRoom publisher, for screenpub's WHIP tests: asks Janus (its HTTP API) to forward the
room's publisher to LOCAL_HOST:PORT as plain RTP (VideoRoom's rtp_forward, what Janus does to feed other
servers), decodes what arrives with GStreamer and prints one JSON line per decoded picture:
{"width": W, "height": H, "r": R, "g": G, "b": B, "time": T} (the mean colour of the picture's centre, and the
wall-clock second it was decoded), then
{"end": "done", "pictures": N}.

Why not a WebRTC subscriber: GStreamer 1.22's webrtcbin does not create an answer to the VideoRoom's subscriber
offer (the promise's answer is NULL), so the tests take the SFU's own forwarding path instead.

Once forwarding, it asks the WHIP front (FRONT_URL/keyframe) to have Janus request a keyframe from the
publisher, as Janus does itself when a WebRTC subscriber joins: the pictures start from it. Until the first picture
is decoded it asks again every second (as an SFU repeats a PLI that went unanswered), and it watches for SECONDS
from that first picture, giving up SECONDS + 20 s after it started.

Usage: janus-subscriber.py JANUS_URL ROOM LOCAL_HOST PORT CODEC SECONDS FRONT_URL
"""
import json
import sys
import time
import urllib.request

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import GLib, Gst, GstApp  # noqa: E402,F401
from janus_api import JanusAPI  # noqa: E402

JANUS, ROOM, HOST, PORT, CODEC, SECONDS, FRONT = (
    sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5].upper(), float(sys.argv[6]), sys.argv[7])
Gst.init(None)


def say(**fields):
    print(json.dumps(fields), flush=True)


janus = JanusAPI(JANUS).call
session = janus("", {"janus": "create"})["data"]["id"]
handle = janus(f"/{session}", {"janus": "attach", "plugin": "janus.plugin.videoroom"})["data"]["id"]
publisher = None
deadline = time.time() + 20
while publisher is None and time.time() < deadline:
    listed = janus(f"/{session}/{handle}", {"janus": "message", "body": {"request": "listparticipants", "room": ROOM}})
    publishing = [p["id"] for p in listed["plugindata"]["data"].get("participants", []) if p.get("publisher")]
    publisher = publishing[-1] if publishing else None
    if publisher is None:
        time.sleep(0.2)
if publisher is None:
    say(end="no publisher in the room", pictures=0)
    sys.exit(1)

# H.264 through libav's decoder (gstreamer1.0-libav), behind a parser that hands it whole access units.
DECODER = {"H264": "h264parse ! avdec_h264"}.get(CODEC, f"{CODEC.lower()}dec")
pipeline = Gst.parse_launch(
    f"udpsrc address={HOST} port={PORT} caps=application/x-rtp,media=video,encoding-name={CODEC},payload=96,clock-rate=90000 "
    f"! rtpjitterbuffer latency=100 ! rtp{CODEC.lower()}depay ! {DECODER} ! videoconvert ! video/x-raw,format=RGBx "
    "! appsink name=pictures emit-signals=true sync=false")
pictures = 0
first_picture = None
loop = GLib.MainLoop()


def on_sample(sink):
    global pictures, first_picture
    sample = sink.emit("pull-sample")
    caps = sample.get_caps().get_structure(0)
    width, height = caps.get_value("width"), caps.get_value("height")
    buffer = sample.get_buffer()
    ok, info = buffer.map(Gst.MapFlags.READ)
    if ok:
        data = info.data
        total, count = [0, 0, 0], 0
        for y in range(height // 4, 3 * height // 4, max(1, height // 16)):
            for x in range(width // 4, 3 * width // 4, max(1, width // 16)):
                offset = (y * width + x) * 4
                total[0] += data[offset]
                total[1] += data[offset + 1]
                total[2] += data[offset + 2]
                count += 1
        buffer.unmap(info)
        pictures += 1
        if first_picture is None:
            first_picture = time.time()
            GLib.timeout_add(int(SECONDS * 1000), loop.quit)
        say(width=width, height=height, r=total[0] // count, g=total[1] // count, b=total[2] // count, time=time.time())
    return Gst.FlowReturn.OK


pipeline.get_by_name("pictures").connect("new-sample", on_sample)
pipeline.set_state(Gst.State.PLAYING)
forward = janus(
    f"/{session}/{handle}",
    {"janus": "message", "body": {"request": "rtp_forward", "room": ROOM, "publisher_id": publisher, "host": HOST, "host_family": "ipv4",
                                  "video_port": PORT, "video_pt": 96}})
say(forwarding=forward.get("plugindata", {}).get("data", {}).get("rtp_stream", {}))


def request_keyframe():
    if first_picture is not None:
        return False
    with urllib.request.urlopen(urllib.request.Request(FRONT + "/keyframe", data=b"", method="POST"), timeout=20) as response:
        say(keyframe_requested_from=int(response.read()))
    return True


request_keyframe()
GLib.timeout_add(1000, request_keyframe)
GLib.timeout_add(int((SECONDS + 20) * 1000), loop.quit)
GLib.timeout_add_seconds(15, lambda: janus(f"/{session}", {"janus": "keepalive"}) is not None)
loop.run()
pipeline.set_state(Gst.State.NULL)
try:
    janus(f"/{session}", {"janus": "destroy"})
except Exception:
    pass
say(end="done", pictures=pictures)
