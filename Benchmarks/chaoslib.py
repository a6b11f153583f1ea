"""What the chaos runs share: a release screenrelay started with the secret and a data directory of its own, its
memory and CPU, the HTTP API, a minimal WebSocket client, and the honest publisher and viewer that every attack is
measured beside (`measure`, which also checks the documented bounds and records what went past them).

Configured by the command line of the script that imports it: [path/to/screenrelay] [seconds per attack].
"""
import json, os, resource, signal, socket, struct, subprocess, sys, tempfile, threading, time, urllib.request
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wsclient  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".build", "release", "screenrelay")
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
SECRET = "chaos-benchmark-secret-that-is-long-enough"
work = tempfile.mkdtemp()
port = 29000 + os.getpid() % 1000
env = dict(os.environ, SCREENRELAY_SECRET=SECRET, XDG_STATE_HOME=work + "/state", XDG_CONFIG_HOME=work + "/config")
relay = subprocess.Popen([BIN, "--port", str(port), "--data-dir", work + "/data", "--shutdown-grace", "5"], env=env, stderr=open(work + "/relay.log", "w"))
BASE = f"http://127.0.0.1:{port}"
# Whatever ends the run (an attack's exception included), the relay does not outlive it.
__import__("atexit").register(lambda: relay.poll() is None and relay.kill())


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


class WebSocket(wsclient.WebSocket):
    """A client of this run's relay (Benchmarks/wsclient.py)."""

    def __init__(self, source=None, receive_buffer=None, headers=""):
        super().__init__(port, source=source, receive_buffer=receive_buffer, headers=headers)


def session():
    status, body = api("POST", "/session")
    made = json.loads(body)
    _, minted = api("POST", f"/session/{made['sessionId']}/token", {"role": "subscriber"})
    return made["sessionId"], made["token"], json.loads(minted)["token"]


frame = wsclient.frame
PROPERTIES = wsclient.properties(2)


class Publisher(wsclient.Publisher):
    """Two frames a second (2 KB), a 60 KB keyframe whenever the relay asks for one, as screenpub answers."""

    def __init__(self, token, delta=2000, keyframe=60000):
        super().__init__(port, token, fps=2, delta=delta, keyframe=keyframe)


class Viewer(threading.Thread):
    """Counts the keyframes and bytes it receives; `spam` asks for a keyframe every 250 ms."""

    def __init__(self, token, stream, spam=False):
        super().__init__(daemon=True)
        self.ws = WebSocket()
        self.ws.control({"type": "hello", "token": token})
        self.ws.receive()
        self.ws.control({"type": "subscribe", "streamId": stream})
        self.stream, self.spam, self.keyframes, self.bytes, self.frames, self.closed = stream, spam, 0, 0, 0, None
        self.controls = 0

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
                else:
                    self.controls += 1
                    if '"error"' in message:
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


# The documented bounds every attack is held to (docs/operations.md): the relay's memory, and that the honest
# viewer keeps receiving. What went past them is listed, and the run exits 1.
PEAK_LIMIT_MB = 600
RETURN_LIMIT_MB = 150
FAILURES = []
raised = min(65536, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
resource.setrlimit(resource.RLIMIT_NOFILE, (raised, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


def measure(name, attack):
    """Runs `attack` for SECONDS beside an honest publisher and viewer; prints RSS (at the start, its peak, and a
    few seconds after the attackers left), CPU and what the viewer got; records a bound passed in FAILURES."""
    session_id, publisher_token, viewer_token = session()
    publisher = Publisher(publisher_token)
    publisher.start()
    honest = Viewer(viewer_token, publisher.stream)
    honest.start()
    time.sleep(2)
    before_keys, before_bytes, before_frames, before_controls = honest.keyframes, honest.bytes, honest.frames, honest.controls
    cpu0, rss0, t0 = cpu_seconds(), rss_mb(), time.time()
    peak = rss0
    result = attack(session_id, publisher_token, viewer_token, publisher.stream)
    while time.time() - t0 < SECONDS:
        peak = max(peak, rss_mb())
        time.sleep(0.25)
    elapsed = time.time() - t0
    keys = (honest.keyframes - before_keys) * 60 / elapsed
    kbps = (honest.bytes - before_bytes) * 8 / elapsed / 1000
    controls = (honest.controls - before_controls) / elapsed
    frames = honest.frames - before_frames
    cpu = (cpu_seconds() - cpu0) / elapsed * 100
    summary = result() if callable(result) else result
    publisher.running = False
    STOP.set()
    time.sleep(3)
    STOP.clear()
    after = rss_mb()
    print(f"{name:<44} honest viewer {keys:5.1f} keyframes/min {kbps:7.1f} kbit/s {controls:6.1f} control/s | relay RSS {rss0:6.1f} → peak "
          f"{peak:6.1f} → after {after:6.1f} MB, CPU {cpu:5.1f} % | {summary}", flush=True)
    if peak > PEAK_LIMIT_MB:
        FAILURES.append(f"{name}: relay RSS peaked at {peak:.0f} MB (bound {PEAK_LIMIT_MB})")
    if after > rss0 + RETURN_LIMIT_MB:
        FAILURES.append(f"{name}: relay RSS {after:.0f} MB after the attack, {after - rss0:.0f} MB over its start (bound {RETURN_LIMIT_MB})")
    if frames == 0 or honest.closed:
        FAILURES.append(f"{name}: the honest viewer received {frames} frames (closed: {honest.closed})")


# Set when an attack's time is up: its threads stop and close their sockets.
STOP = threading.Event()


def finish():
    """Prints what went past a bound and exits 1 if anything did."""
    for failure in FAILURES:
        print(f"BOUND PASSED: {failure}", flush=True)
    print("chaos: " + ("all bounds held" if not FAILURES else f"{len(FAILURES)} bound(s) passed"), flush=True)
    sys.exit(1 if FAILURES else 0)
