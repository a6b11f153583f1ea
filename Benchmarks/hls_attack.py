#!/usr/bin/python3
"""One viewer against everyone's LL-HLS: a real screenrelay (its default 6 s segments of 0.5 s parts) publishing a
share, attacked with one viewer token by `attack()` — waves of blocking playlist reloads (`_HLS_msn`/`_HLS_part`)
for the farthest part the relay lets a request wait for, over raw sockets — while an honest player of the same
viewer link, from another address (127.0.0.2), makes its blocking reloads one after the other, as a player does
(after a 503 it waits for Retry-After, else 1 s). Prints, for each way of attacking, what the honest player's
reloads were answered (200, 503, …) over the measuring time, the relay's CPU, and what its /metrics counted.

  as reported   520 requests every 5 s, each socket closed 50 ms after its request is sent
  held open     520 requests every 5 s, each socket held until the next wave

With SCREENSUB=path/to/screensub, `screensub --hls` follows the share through each attack too (another viewer, with
a token of its own, on this machine), and whether it was still following at the end (and how many segments it
read) is printed.

Usage: Benchmarks/hls_attack.py [path/to/screenrelay] [seconds per attack, default 30]
       (default binary: the release build, .build/release/screenrelay)
"""
import json, os, re, socket, subprocess, sys, tempfile, threading, time, urllib.request
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wsclient  # noqa: E402

BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".build", "release", "screenrelay")
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
SCREENSUB = os.environ.get("SCREENSUB")
SECRET = "hls-attack-benchmark-secret-long-enough"
HONEST_ADDRESS = "127.0.0.2"


def api(base, method, path, body=None, bearer=SECRET):
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def raw_request(port, path, source=None, timeout=40.0):
    """A socket connected to the relay with `GET path` sent (from `source`, an address to bind); None if it failed."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        if source:
            sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        return sock
    except OSError:
        sock.close()
        return None


def raw_get(port, path, source=None, timeout=40.0):
    """(status, headers text, body) of one request; status 0 when no answer came."""
    sock = raw_request(port, path, source, timeout)
    if sock is None:
        return 0, "", b""
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    match = re.match(rb"HTTP/1\.1 (\d{3})", head)
    return (int(match.group(1)) if match else 0), head.decode(errors="replace"), body


def Publisher(port, token):
    """Five frames a second (2 KB; a 30 KB keyframe every 2 s and whenever the relay asks), as a share sends them."""
    return wsclient.Publisher(port, token, fps=5, delta=2000, keyframe=30000, keyframe_every=10)


def live_segment(playlist):
    """The open segment's number: the one the preload hint names, else the one after the last listed."""
    hint = re.search(r'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-(\d+)\.', playlist)
    if hint:
        return int(hint.group(1))
    sequence = int(re.search(r"#EXT-X-MEDIA-SEQUENCE:(\d+)", playlist).group(1))
    return sequence + playlist.count("#EXTINF")


def next_part(playlist):
    """The part a player at the live edge asks for next: the hinted one (`_HLS_msn`, `_HLS_part`)."""
    hint = re.search(r'#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-(\d+)\.(\d+)\.m4s', playlist)
    return (int(hint.group(1)), int(hint.group(2))) if hint else (live_segment(playlist), 0)


def attack(port, path_of, seconds, per_wave=520, period=5.0, close_after=0.05, hold=False):
    """The attack of one viewer token: every `period` seconds, `per_wave` requests for `path_of()` over raw sockets,
    each closed `close_after` seconds after its request is sent (or, with `hold`, held open until the next wave).
    Returns the number of requests sent."""
    sent, held, end = 0, [], time.time() + seconds
    while time.time() < end:
        began = time.time()
        path = path_of()
        wave = [sock for sock in (raw_request(port, path, timeout=5) for _ in range(per_wave)) if sock]
        sent += len(wave)
        for sock in held:
            sock.close()
        if hold:
            held = wave
        else:
            time.sleep(close_after)
            for sock in wave:
                sock.close()
        time.sleep(max(0.0, min(period - (time.time() - began), end - time.time())))
    for sock in held:
        sock.close()
    return sent


def honest_player(port, session, token, seconds, statuses):
    """An honest LL-HLS player of the same link from another address: blocking reloads one after the other, each
    for the part after the newest it was told of; after a 503 it waits as players do (Retry-After, else 1 s)."""
    base = f"/hls/{session}/stream.m3u8?token={token}"
    status, _, body = raw_get(port, base, HONEST_ADDRESS)
    playlist = body.decode(errors="replace")
    end = time.time() + seconds
    while time.time() < end:
        msn, part = next_part(playlist)
        status, head, body = raw_get(port, f"{base}&_HLS_msn={msn}&_HLS_part={part}", HONEST_ADDRESS)
        statuses.append((time.time(), status))
        if status == 200:
            playlist = body.decode(errors="replace")
        else:
            retry = re.search(r"(?im)^retry-after:\s*(\d+)", head)
            time.sleep(int(retry.group(1)) if retry else 1)
            status, _, body = raw_get(port, base, HONEST_ADDRESS)
            if status == 200:
                playlist = body.decode(errors="replace")


def metrics(base):
    status, body = api(base, "GET", "/metrics", bearer="")
    text = body.decode(errors="replace") if status == 200 else ""
    found = dict(re.findall(r'screenrelay_refused_total\{limit="(hls_waiting[a-z_]*)"\} (\d+)', text))
    return {name: int(value) for name, value in found.items()}


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(name, hold):
    """A relay of its own, a share, the honest player and `attack` for SECONDS; one line of figures."""
    work = tempfile.mkdtemp()
    port = 30000 + (os.getpid() + int(time.time())) % 5000
    env = dict(os.environ, SCREENRELAY_SECRET=SECRET, XDG_STATE_HOME=work + "/state", XDG_CONFIG_HOME=work + "/config")
    relay = subprocess.Popen([BIN, "--port", str(port), "--data-dir", work + "/data"], env=env, stderr=open(work + "/relay.log", "w"))
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(base + "/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        _, made = api(base, "POST", "/session")
        made = json.loads(made)
        session = made["sessionId"]
        _, minted = api(base, "POST", f"/session/{session}/token", {"role": "subscriber"})
        token = json.loads(minted)["token"]
        publisher = Publisher(port, made["token"])
        publisher.start()
        # The first request starts HLS and is answered once two segments are out.
        status, _, body = raw_get(port, f"/hls/{session}/stream.m3u8?token={token}")
        if status != 200:
            print(f"{name}: the playlist answered {status}", flush=True)
            return
        live = {"playlist": body.decode(errors="replace")}

        def path_of():
            # The farthest a request may wait for: two segments past the open one, as the playlist says now.
            status, _, body = raw_get(port, f"/hls/{session}/stream.m3u8?token={token}")
            if status == 200:
                live["playlist"] = body.decode(errors="replace")
            return f"/hls/{session}/stream.m3u8?token={token}&_HLS_msn={live_segment(live['playlist']) + 2}&_HLS_part=0"
        follower = None
        if SCREENSUB:
            # Another viewer, with a link of its own, on this machine.
            _, minted = api(base, "POST", f"/session/{session}/token", {"role": "subscriber"})
            follower = subprocess.Popen([SCREENSUB, "--hls", f"{base}/hls/{session}/index.m3u8?token={json.loads(minted)['token']}"],
                                        stdout=subprocess.PIPE, stderr=open(work + "/screensub.log", "w"), text=True)
        statuses, cpu0, t0 = [], cpu_seconds(relay.pid), time.time()
        honest = threading.Thread(target=honest_player, args=(port, session, token, SECONDS, statuses), daemon=True)
        honest.start()
        sent = attack(port, path_of, SECONDS, hold=hold)
        honest.join(timeout=60)
        elapsed = time.time() - t0
        cpu = (cpu_seconds(relay.pid) - cpu0) / elapsed * 100
        answers = {}
        for _, status in statuses:
            answers[status] = answers.get(status, 0) + 1
        answered = ", ".join(f"{count}× {status or 'no answer'}" for status, count in sorted(answers.items()))
        # What a viewer sees: the longest stretch without a new part (between answers 200), and how long in all.
        oks = [t0] + [when for when, status in statuses if status == 200] + [t0 + elapsed]
        gaps = [later - earlier for earlier, later in zip(oks, oks[1:])]
        stalled = sum(gap for gap in gaps if gap > 1.5)
        line = (f"{name:<12} honest blocking reloads in {elapsed:.0f} s: {answered or 'none'}; longest without a 200 "
                f"{max(gaps):.1f} s, {stalled:.0f} s in stretches over 1.5 s | attack: {sent} requests | "
                f"relay CPU {cpu:.0f} % | refused {metrics(base) or '—'}")
        if follower:
            running = follower.poll() is None
            follower.terminate()
            out, _ = follower.communicate(timeout=10)
            segments = sum(1 for row in out.splitlines() if "segment" in row)
            line += f" | screensub --hls: {'still following' if running else f'exited {follower.returncode}'}, {segments} segments"
            note = open(work + "/screensub.log").read().strip().splitlines()
            if note:
                last = re.sub(r"token=[^&\s\"]+", "token=…", note[-1])
                line += f" ({len(note)} line(s) on stderr, the last: {last[:200]})"
        print(line, flush=True)
        publisher.running = False
    finally:
        relay.terminate()
        try:
            relay.wait(timeout=20)
        except subprocess.TimeoutExpired:
            relay.kill()


if __name__ == "__main__":
    print(f"screenrelay {BIN}, {SECONDS:.0f} s an attack; the honest player connects from {HONEST_ADDRESS}", flush=True)
    measure("as reported", hold=False)
    measure("held open", hold=True)
