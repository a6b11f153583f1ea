#!/usr/bin/python3
"""Big request heads from clients holding no token, against screenrelay.

    Benchmarks/heads.py [SCREENRELAY] [--connections 2000] [--kib 100] [--hold 15] [--unfinished]

Starts SCREENRELAY (default .build/release/screenrelay) on a free loopback port, then opens CONNECTIONS
connections that each send one request head of KIB KiB (a request line, Host, padding fields, the empty line)
and read whatever comes back. Says what the relay answered, how many of those connections it still holds HOLD
seconds after the attack began, its resident memory before, at the peak and after the attackers have gone, what
/healthz answered during the attack (asked every 250 ms), and how many lines the relay logged meanwhile. With
--unfinished the heads lack their empty line: under the size limits (say --kib 39) they show the most a relay
holds for a connection until the head's deadline.
Standard library only.
"""
import argparse
import http.client
import os
import re
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def resident_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def head(kib, finished=True):
    text = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    size, index = kib << 10, 0
    while len(text) < size - 2:
        prefix = b"X-Pad-%d: " % index
        room = size - 2 - len(text) - len(prefix) - 2
        text += prefix + b"a" * max(1, min(4000, room)) + b"\r\n"
        index += 1
    return text + b"\r\n" if finished else text


def start_relay(path, directory):
    secret = os.path.join(directory, "secret")
    with open(secret, "w") as file:
        file.write("heads-benchmark-secret-" + "x" * 32 + "\n")
    log = open(os.path.join(directory, "relay.log"), "w+")
    relay = subprocess.Popen(
        [path, "--port", "0", "--secret-file", secret, "--data-dir", os.path.join(directory, "data")],
        stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(log.name) as text:
            found = re.search(r"listening on port (\d+)", text.read())
        if found:
            return relay, int(found.group(1)), log.name
        if relay.poll() is not None:
            break
        time.sleep(0.05)
    relay.kill()
    sys.exit(f"{path} did not start:\n" + open(log.name).read())


def healthz(port, timeout=2.0):
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        connection.request("GET", "/healthz")
        status = connection.getresponse().status
        connection.close()
        return status
    except (OSError, http.client.HTTPException) as error:
        return type(error).__name__


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("screenrelay", nargs="?", default=os.path.join(ROOT, ".build/release/screenrelay"))
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--kib", type=int, default=100)
    parser.add_argument("--hold", type=float, default=15)
    parser.add_argument("--unfinished", action="store_true", help="heads without their closing empty line")
    options = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < options.connections + 64:
        sys.exit(f"this shell allows {hard} descriptors: fewer than {options.connections} connections")

    directory = tempfile.mkdtemp(prefix="heads-")
    relay, port, log_path = start_relay(options.screenrelay, directory)
    try:
        if healthz(port) != 200:
            sys.exit("the relay does not answer /healthz")
        time.sleep(1)
        before = resident_kb(relay.pid)
        log_lines_before = sum(1 for _ in open(log_path))

        # /healthz every 250 ms, and the relay's memory every 100 ms, while the attack runs.
        running = threading.Event()
        running.set()
        statuses, peak = [], [before]

        def ask():
            while running.is_set():
                statuses.append(healthz(port))
                time.sleep(0.25)

        def sample():
            while running.is_set():
                peak[0] = max(peak[0], resident_kb(relay.pid))
                time.sleep(0.1)

        threads = [threading.Thread(target=ask, daemon=True), threading.Thread(target=sample, daemon=True)]
        for thread in threads:
            thread.start()

        payload = head(options.kib, finished=not options.unfinished)
        selector = selectors.DefaultSelector()
        sockets = {}
        started = time.time()
        # At most 200 connections sending their head at once, the rest opened as those finish: all at once would
        # overflow the relay's listen queue (256), and the kernel's SYN cookies would reset connections before the
        # relay ever saw them.
        while time.time() < started + options.hold:
            sending = sum(1 for state in sockets.values() if 0 <= state["sent"] < len(payload) and not state["closed"])
            if len(sockets) < options.connections and sending < 200:
                for _ in range(min(200 - sending, options.connections - len(sockets))):
                    attacker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    attacker.setblocking(False)
                    attacker.connect_ex(("127.0.0.1", port))
                    sockets[attacker] = {"sent": 0, "answer": b"", "closed": False}
                    selector.register(attacker, selectors.EVENT_READ | selectors.EVENT_WRITE)
            # Send every head and read what comes back, until HOLD seconds after the start.
            for key, events in selector.select(timeout=0.02):
                attacker, state = key.fileobj, sockets[key.fileobj]
                if events & selectors.EVENT_WRITE and 0 <= state["sent"] < len(payload):
                    try:
                        state["sent"] += attacker.send(payload[state["sent"]:state["sent"] + 65536])
                    except BlockingIOError:
                        pass
                    except OSError:
                        # The relay stopped reading (it refused the head): what it answered is still to be read.
                        state["sent"] = -1
                    if state["sent"] >= len(payload) or state["sent"] < 0:
                        selector.modify(attacker, selectors.EVENT_READ)
                if events & selectors.EVENT_READ and not state["closed"]:
                    try:
                        chunk = attacker.recv(65536)
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    if chunk:
                        state["answer"] += chunk[:256] if len(state["answer"]) < 256 else b""
                    else:
                        state["closed"] = True
                        selector.unregister(attacker)
        still_open = sum(1 for state in sockets.values() if not state["closed"])
        fully_sent = sum(1 for state in sockets.values() if state["sent"] >= len(payload))
        cut_short = sum(1 for state in sockets.values() if state["sent"] < 0)
        answers = {}
        for state in sockets.values():
            line = state["answer"].split(b"\r\n", 1)[0].decode(errors="replace")
            status = line.split(" ")[1] if line.startswith("HTTP/") and " " in line else "none"
            answers[status] = answers.get(status, 0) + 1
        running.clear()
        for thread in threads:
            thread.join()
        during_peak = peak[0]
        for attacker in sockets:
            attacker.close()
        selector.close()
        time.sleep(5)
        after = resident_kb(relay.pid)
        log_lines = sum(1 for _ in open(log_path)) - log_lines_before
        codes = {}
        for status in statuses:
            codes[status] = codes.get(status, 0) + 1

        print(f"screenrelay: {options.screenrelay}")
        kind = "unfinished heads" if options.unfinished else "heads"
        print(f"attack: {options.connections} connections x {options.kib} KiB {kind}, no token; {fully_sent} sent whole, "
              f"{cut_short} cut short by the relay")
        print("answers: " + ", ".join(f"{count} x {status}" for status, count in sorted(answers.items())))
        print(f"still open {options.hold:g} s after the attack began: {still_open} of {options.connections}")
        print(f"relay RSS: before {before / 1024:.1f} MiB, peak {during_peak / 1024:.1f} MiB, "
              f"5 s after the attackers closed {after / 1024:.1f} MiB")
        print("/healthz during the attack: " + ", ".join(f"{count} x {status}" for status, count in sorted(codes.items(), key=str)))
        print(f"relay log lines during the attack: {log_lines}")
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", "/metrics")
            text = connection.getresponse().read().decode()
            refused = re.findall(r'screenrelay_refused_total\{limit="(request_\w+|connections\w*|tls_handshake)"\} (\d+)', text)
            print("refused (/metrics): " + ", ".join(f"{limit} {count}" for limit, count in refused if count != "0"))
        except (OSError, http.client.HTTPException) as error:
            print(f"/metrics: {error}")
    finally:
        relay.terminate()
        try:
            relay.wait(timeout=20)
        except subprocess.TimeoutExpired:
            relay.kill()


if __name__ == "__main__":
    main()
