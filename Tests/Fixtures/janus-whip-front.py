#!/usr/bin/python3
"""A WHIP endpoint (RFC 9725) in front of a Janus VideoRoom, for screenpub's WHIP tests.

Usage: janus-whip-front.py LISTEN_HOST LISTEN_PORT JANUS_URL ROOM TOKEN

POST /whip/{room}        Authorization: Bearer TOKEN, body application/sdp (a complete offer):
                         joins ROOM as a publisher through Janus's HTTP API, 201 with the answer and
                         Location: /whip/resource/{id}
DELETE /whip/resource/{id}  leaves (destroys the Janus session), 200
POST /redirect/…         307 to the same path without /redirect (a WHIP endpoint that moved)
POST /whip-nodata/{room}  the same, but the answer refuses the offer's data channel (its m=application port 0, out of
                         the BUNDLE group), as an SFU without data channels answers
POST /keyframe           asks every publisher for a keyframe (VideoRoom's configure "keyframe": Janus sends a PLI),
                         as Janus does when a WebRTC subscriber joins

Like a real WHIP front (simple-whip-server) it answers 201 even when Janus drops a codec the room does not
take: the client must check the answer. It keeps the Janus sessions alive while it holds them.
"""
import http.server
import json
import random
import sys
import threading
import time

from janus_api import JanusAPI

LISTEN_HOST, LISTEN_PORT, JANUS, ROOM, TOKEN = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
api = JanusAPI(JANUS)
janus = api.call
sessions = {}  # resource id -> (janus session id, publisher handle id)
lock = threading.Lock()


def refuse_data_channel(sdp):
    """The answer with its application m-line refused (port 0) and left out of the BUNDLE group."""
    head, *sections = sdp.split("\r\nm=")
    refused = []
    for index, section in enumerate(sections):
        if section.startswith("application "):
            fields = section.split("\r\n")
            mid = next((line[6:] for line in fields if line.startswith("a=mid:")), None)
            first = fields[0].split(" ")
            first[1] = "0"
            sections[index] = "\r\n".join([" ".join(first)] + [line for line in fields[1:] if not line.startswith("a=candidate")])
            if mid:
                refused.append(mid)
    lines = []
    for line in head.split("\r\n"):
        if line.startswith("a=group:BUNDLE"):
            line = " ".join(word for word in line.split(" ") if word not in refused)
        lines.append(line)
    return "\r\nm=".join(["\r\n".join(lines)] + sections)


def keepalive():
    while True:
        time.sleep(15)
        with lock:
            held = [session for session, _ in sessions.values()]
        for session in held:
            try:
                janus(f"/{session}", {"janus": "keepalive"})
            except Exception:
                pass


class Front(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        sys.stderr.write("whip-front: " + (args[0] % args[1:]) + "\n")

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        offer = self.rfile.read(length).decode()
        if self.path == "/keyframe":
            with lock:
                held = list(sessions.values())
            for session, handle in held:
                janus(f"/{session}/{handle}", {"janus": "message", "body": {"request": "configure", "keyframe": True}})
            return self.reply(200, str(len(held)).encode())
        if self.path.startswith("/redirect/"):
            return self.reply(307, b"", [("Location", self.path[len("/redirect"):])])
        no_data = self.path.startswith("/whip-nodata/")
        if not self.path.startswith("/whip/") and not no_data:
            return self.reply(404, b"no such endpoint")
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.reply(401, b"wrong or missing token", [("WWW-Authenticate", "Bearer")])
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/sdp":
            return self.reply(415, b"an offer must be application/sdp")
        try:
            session = janus("", {"janus": "create"})["data"]["id"]
            handle = janus(f"/{session}", {"janus": "attach", "plugin": "janus.plugin.videoroom"})["data"]["id"]
            join = janus(f"/{session}/{handle}", {"janus": "message", "body": {"request": "join", "ptype": "publisher", "room": ROOM, "display": "whip"}})
            api.event(session, join["transaction"])
            configure = janus(
                f"/{session}/{handle}",
                {"janus": "message", "body": {"request": "publish", "audio": True, "video": True}, "jsep": {"type": "offer", "sdp": offer}},
            )
            answer = api.event(session, configure["transaction"])
        except Exception as error:
            return self.reply(502, f"janus: {error}".encode())
        jsep = answer.get("jsep")
        if not jsep:
            return self.reply(502, json.dumps(answer).encode())
        sdp = refuse_data_channel(jsep["sdp"]) if no_data else jsep["sdp"]
        resource = "%016x" % random.getrandbits(64)
        with lock:
            sessions[resource] = (session, handle)
        self.reply(201, sdp.encode(), [("Content-Type", "application/sdp"), ("Location", f"/whip/resource/{resource}")])

    def do_DELETE(self):
        resource = self.path.rsplit("/", 1)[-1]
        with lock:
            held = sessions.pop(resource, None)
        if held is None:
            return self.reply(404, b"no such resource")
        sys.stderr.write(f"whip-front: DELETE of resource {resource}\n")
        try:
            janus(f"/{held[0]}", {"janus": "destroy"})
        except Exception:
            pass
        self.reply(200)


threading.Thread(target=keepalive, daemon=True).start()
server = http.server.ThreadingHTTPServer((LISTEN_HOST, LISTEN_PORT), Front)
print(f"whip-front listening on {LISTEN_HOST}:{LISTEN_PORT}", flush=True)
server.serve_forever()
