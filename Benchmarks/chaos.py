#!/usr/bin/python3
"""The attacks of a client holding only the tokens a relay hands out, each against a real screenrelay beside an
honest publisher and an honest viewer, with the relay's memory (RSS) and CPU reported for each, and what the
honest viewer saw (keyframes a minute, bit rate). Ends with SIGTERM while a viewer reads nothing.

Usage: Benchmarks/chaos.py [path/to/screenrelay] [seconds per attack, default 30]
       (default binary: the release build, .build/release/screenrelay)
"""
import json, os, signal, socket, struct, subprocess, sys, tempfile, threading, time, urllib.request

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".build", "release", "screenrelay")
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
SECRET = "chaos-benchmark-secret-that-is-long-enough"
work = tempfile.mkdtemp()
port = 29000 + os.getpid() % 1000
env = dict(os.environ, SCREENRELAY_SECRET=SECRET, XDG_STATE_HOME=work + "/state", XDG_CONFIG_HOME=work + "/config")
relay = subprocess.Popen([BIN, "--port", str(port), "--data-dir", work + "/data", "--shutdown-grace", "5"], env=env, stderr=open(work + "/relay.log", "w"))
BASE = f"http://127.0.0.1:{port}"


def rss_mb():
    for line in open(f"/proc/{relay.pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024


def cpu_seconds():
    fields = open(f"/proc/{relay.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def api(method, path, body=None, bearer=SECRET):
    request = urllib.request.Request(BASE + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


class WebSocket:
    """A minimal client: masked frames out, whole messages in (text as str, binary as bytes)."""

    def __init__(self):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.sendall(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(4096)
        self.buffer = self.buffer.split(b"\r\n\r\n", 1)[1]

    def send(self, data, opcode=None):
        payload = data.encode() if isinstance(data, str) else data
        opcode = opcode or (1 if isinstance(data, str) else 2)
        # Fragments of at most 64 KiB, as the relay's protocol asks.
        chunks = [payload[i:i + 65536] for i in range(0, len(payload), 65536)] or [b""]
        for index, chunk in enumerate(chunks):
            fin = 0x80 if index == len(chunks) - 1 else 0
            head = bytes([fin | (opcode if index == 0 else 0)])
            n = len(chunk)
            head += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n)
            self.sock.sendall(head + b"\0\0\0\0" + chunk)

    def _read(self, n):
        while len(self.buffer) < n:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError
            self.buffer += data
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def receive(self):
        message, first = b"", None
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            data = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 9:
                self.send(data, opcode=10)
                continue
            if opcode == 8:
                raise EOFError
            first = first if opcode == 0 else opcode
            message += data
            if b0 & 0x80:
                return message.decode() if first == 1 else message

    def control(self, message):
        self.send(json.dumps(dict(v=1, **message)))


def session():
    status, body = api("POST", "/session")
    made = json.loads(body)
    _, minted = api("POST", f"/session/{made['sessionId']}/token", {"role": "subscriber"})
    return made["sessionId"], made["token"], json.loads(minted)["token"]


def frame(stream, sequence, key, time_ns, payload):
    header = struct.pack(">2sBBBBBBIHHQqiqI", b"SP", 1, 48, 1 if key else 0, 2, 0, 0, stream, 1280, 720, sequence, time_ns,
                         1_000_000_000, int(time.time() * 1000), len(payload))
    return header + payload


PROPERTIES = {"videoType": "screen", "codec": "vp9", "width": 1280, "height": 720, "estimatedFramesPerSecond": 2,
              "estimatedCaptureDelayMilliseconds": 1}


class Publisher(threading.Thread):
    """Two frames a second (2 KB), a 60 KB keyframe whenever the relay asks for one, as screenpub answers."""

    def __init__(self, token, delta=2000, keyframe=60000):
        super().__init__(daemon=True)
        self.ws = WebSocket()
        self.ws.control({"type": "hello", "token": token})
        self.ws.receive()
        self.ws.control({"type": "publish", "name": "screen", "properties": PROPERTIES})
        while True:
            message = json.loads(self.ws.receive())
            if message["type"] == "published":
                self.stream = message["stream"]["streamId"]
                break
        self.keyframe_due, self.running, self.sizes = True, True, (delta, keyframe)
        threading.Thread(target=self.listen, daemon=True).start()

    def listen(self):
        try:
            while self.running:
                message = self.ws.receive()
                if isinstance(message, str) and '"requestKeyframe"' in message:
                    self.keyframe_due = True
        except Exception:
            pass

    def run(self):
        sequence = 0
        while self.running:
            key, self.keyframe_due = self.keyframe_due, False
            try:
                self.ws.send(frame(self.stream, sequence, key, time.monotonic_ns(), bytes(self.sizes[1] if key else self.sizes[0])))
            except Exception:
                return
            sequence += 1
            time.sleep(0.5)


class Viewer(threading.Thread):
    """Counts the keyframes and bytes it receives; `spam` asks for a keyframe every 250 ms."""

    def __init__(self, token, stream, spam=False):
        super().__init__(daemon=True)
        self.ws = WebSocket()
        self.ws.control({"type": "hello", "token": token})
        self.ws.receive()
        self.ws.control({"type": "subscribe", "streamId": stream})
        self.stream, self.spam, self.keyframes, self.bytes, self.frames, self.closed = stream, spam, 0, 0, 0, None

    def run(self):
        if self.spam:
            threading.Thread(target=self.ask, daemon=True).start()
        try:
            while True:
                message = self.ws.receive()
                if isinstance(message, bytes):
                    self.frames += 1
                    self.bytes += len(message)
                    self.keyframes += message[4] & 1
                elif '"error"' in message:
                    self.closed = json.loads(message).get("code")
        except Exception:
            pass

    def ask(self):
        try:
            while self.closed is None:
                self.ws.control({"type": "requestKeyframe", "streamId": self.stream})
                time.sleep(0.25)
        except Exception:
            pass


def measure(name, attack):
    """Runs `attack` for SECONDS beside an honest publisher and viewer; prints RSS, CPU and what the viewer got."""
    session_id, publisher_token, viewer_token = session()
    publisher = Publisher(publisher_token)
    publisher.start()
    honest = Viewer(viewer_token, publisher.stream)
    honest.start()
    time.sleep(2)
    before_keys, before_bytes, cpu0, rss0, t0 = honest.keyframes, honest.bytes, cpu_seconds(), rss_mb(), time.time()
    peak = rss0
    result = attack(session_id, publisher_token, viewer_token, publisher.stream)
    while time.time() - t0 < SECONDS:
        peak = max(peak, rss_mb())
        time.sleep(0.5)
    elapsed = time.time() - t0
    keys = (honest.keyframes - before_keys) * 60 / elapsed
    kbps = (honest.bytes - before_bytes) * 8 / elapsed / 1000
    cpu = (cpu_seconds() - cpu0) / elapsed * 100
    publisher.running = False
    time.sleep(1)
    print(f"{name:<44} honest viewer {keys:5.1f} keyframes/min {kbps:7.1f} kbit/s | relay RSS {rss0:6.1f} → peak {peak:6.1f} MB, "
          f"CPU {cpu:5.1f} % | {result() if callable(result) else result}", flush=True)


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
    relay.kill()
