#!/usr/bin/env python3
"""Hostile connections against a real screenrelay: 600 at once (100 WebSockets claiming an 8 MiB message before
hello, 100 stalled mid-message, 200 slowloris requests, 200 silent sockets). Prints the relay's memory and
descriptors before, during and after, how long it takes to shed them, and what /metrics counted.

Usage: Benchmarks/hostile.py [path/to/screenrelay]   (default: the release build, .build/release/screenrelay)
"""
import os, socket, struct, subprocess, sys, tempfile, time, urllib.request
work = tempfile.mkdtemp()
bin = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".build", "release", "screenrelay")
port = 28000 + os.getpid() % 1000
env = dict(os.environ, SCREENRELAY_SECRET="x"*40, XDG_STATE_HOME=work + "/state", XDG_CONFIG_HOME=work + "/config")
relay = subprocess.Popen([bin, "--port", str(port)], env=env, stderr=subprocess.DEVNULL)
def rss():
    for line in open(f"/proc/{relay.pid}/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
def fds(): return len(os.listdir(f"/proc/{relay.pid}/fd"))
for _ in range(100):
    try: urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz"); break
    except Exception: time.sleep(0.1)
def frame(opcode, fin, payload, declared=None):
    n = declared if declared is not None else len(payload)
    head = bytes([(0x80 if fin else 0) | opcode])
    if n < 126: head += bytes([0x80 | n])
    elif n < 65536: head += bytes([0x80 | 126]) + struct.pack(">H", n)
    else: head += bytes([0x80 | 127]) + struct.pack(">Q", n)
    mask = b"\x12\x34\x56\x78"
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
def ws():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data: data += s.recv(4096)
    return s
time.sleep(1)
base = rss(); print(f"relay idle: {base:.1f} MB, {fds()} fds")
socks = []
big = bytes(65536)
claims = frame(2, True, big, declared=8 << 20)
for i in range(100):
    s = ws(); s.sendall(claims); socks.append(s)
frag = frame(2, False, bytes(60000))
for i in range(100):
    s = ws(); s.sendall(frag); socks.append(s)
for i in range(200):
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "); socks.append(s)
for i in range(200):
    socks.append(socket.create_connection(("127.0.0.1", port)))
time.sleep(1)
peak = rss(); print(f"with 600 hostile connections (100 claiming 8 MiB, 100 stalled 60 KiB fragments, 200 slowloris, 200 silent): {peak:.1f} MB (+{peak-base:.1f}), {fds()} fds")
t0 = time.time()
while fds() > 30 and time.time() - t0 < 60: time.sleep(0.5)
print(f"all hostile connections closed by the relay after {time.time()-t0:.1f} s; {fds()} fds, {rss():.1f} MB")
t1 = time.time(); ok = urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz").status
print(f"/healthz {ok} in {1000*(time.time()-t1):.1f} ms")
m = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
print("\n".join(l for l in m.splitlines() if l.startswith("screenrelay_refused_total") and not l.endswith(" 0")))
relay.kill()
relay.wait()
import shutil
shutil.rmtree(work, ignore_errors=True)
