"""A minimal WebSocket client for the benchmarks' attack scripts, and a synthetic publisher over it: masked frames out (in fragments of at most 64 KiB,
as the relay's protocol asks), whole messages in (text as str, binary as bytes), pings answered. Stdlib only.
"""
import json, socket, struct, threading, time


class WebSocket:
    """A minimal client: masked frames out, whole messages in (text as str, binary as bytes)."""

    def __init__(self, port, source=None, receive_buffer=None, headers=""):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer:
            # Set before connecting, so that the window the kernel offers stays this small.
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        if source:
            self.sock.bind((source, 0))
        self.sock.settimeout(30)
        self.sock.connect(("127.0.0.1", port))
        self.sock.sendall(f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{headers}\r\n".encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            data = self.sock.recv(4096)
            if not data:
                raise EOFError
            self.buffer += data
        self.buffer = self.buffer.split(b"\r\n\r\n", 1)[1]
        self.sock.settimeout(None)
        self.lock = threading.Lock()

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
            with self.lock:
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


def frame(stream, sequence, key, time_ns, payload):
    """A video frame message as protocol.md lays it out (VP9, 1280×720, no metadata)."""
    header = struct.pack(">2sBBBBBBIHHQqiqI", b"SP", 1, 48, 1 if key else 0, 2, 0, 0, stream, 1280, 720, sequence, time_ns,
                         1_000_000_000, int(time.time() * 1000), len(payload))
    return header + payload


def properties(fps):
    return {"videoType": "screen", "codec": "vp9", "width": 1280, "height": 720, "estimatedFramesPerSecond": fps,
            "estimatedCaptureDelayMilliseconds": 1}


def publish(ws, name="screen", stream_properties=None):
    """Publishes a stream on `ws` (said hello) and returns its id once the relay has answered `published`."""
    ws.control({"type": "publish", "name": name, "properties": stream_properties or properties(2)})
    while True:
        message = ws.receive()
        if isinstance(message, str) and json.loads(message)["type"] == "published":
            return json.loads(message)["stream"]["streamId"]


class Publisher(threading.Thread):
    """`fps` frames a second of `delta` bytes, and a keyframe of `keyframe` bytes whenever the relay asks for one (as
    screenpub answers) and, with `keyframe_every`, every that many frames."""

    def __init__(self, port, token, fps=2, delta=2000, keyframe=60000, keyframe_every=None):
        super().__init__(daemon=True)
        self.ws = WebSocket(port)
        self.ws.control({"type": "hello", "token": token})
        self.ws.receive()
        self.stream = publish(self.ws, stream_properties=properties(fps))
        self.fps, self.keyframe_every, self.sizes = fps, keyframe_every, (delta, keyframe)
        self.keyframe_due, self.running = True, True
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
            key = self.keyframe_due or (self.keyframe_every is not None and sequence % self.keyframe_every == 0)
            self.keyframe_due = False
            try:
                self.ws.send(frame(self.stream, sequence, key, time.monotonic_ns(), bytes(self.sizes[1] if key else self.sizes[0])))
            except Exception:
                return
            sequence += 1
            time.sleep(1 / self.fps)
