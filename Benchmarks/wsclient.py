"""A minimal WebSocket client for the benchmarks' attack scripts: masked frames out (in fragments of at most 64 KiB,
as the relay's protocol asks), whole messages in (text as str, binary as bytes), pings answered. Stdlib only.
"""
import json, socket, struct, threading


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
