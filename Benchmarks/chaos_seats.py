"""The attacks on what one token's connections may take from a session: its memory (subscriptions cycled with
catch-up on connections that never read), its seats (thousands of hellos with one viewer link, as from behind a
proxy), its members' attention (join/leave churn, stream property spam at a viewer on a 32 KB/s socket). Each is a
function for chaoslib.measure; chaos.py runs them.
"""
from chaoslib import *  # noqa: F401,F403


def keep_trying(action):
    """Runs `action` until the attack's time is up or STOP is set, in a thread; swallows the attacker's errors."""
    def run():
        end = time.time() + SECONDS - 1
        while time.time() < end and not STOP.is_set():
            try:
                action()
            except Exception:
                time.sleep(0.05)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def subscribe_churn(session_id, publisher_token, viewer_token, stream):
    """Ten viewer connections that never read (a 4 KB receive buffer) cycle subscribe with catch-up and unsubscribe
    as fast as they can: each subscribe would queue the cached group of pictures again."""
    counts = {"cycles": 0, "refused": 0}
    sockets = []
    for _ in range(10):
        ws = WebSocket(receive_buffer=4096)
        ws.control({"type": "hello", "token": viewer_token})
        sockets.append(ws)

    def cycle(ws):
        def once():
            ws.control({"type": "subscribe", "streamId": stream, "catchUp": True})
            ws.control({"type": "unsubscribe", "streamId": stream})
            counts["cycles"] += 1
        return once
    for ws in sockets:
        keep_trying(cycle(ws))

    def report():
        status, body = api("GET", "/metrics")
        text = body.decode()
        def value(limit):
            for line in text.splitlines():
                if line.startswith(f'screenrelay_refused_total{{limit="{limit}"}}'):
                    return int(line.split()[-1])
            return 0
        for ws in sockets:
            ws.sock.close()
        return (f"{counts['cycles']} cycles sent; refused: subscription_rate {value('subscription_rate')}, "
                f"queued_control {value('queued_control')}, queued_bytes {value('queued_bytes')}")
    return report


def hello_flood(session_id, publisher_token, viewer_token, stream):
    """2 000 hellos with one viewer link from 127.0.0.1–4 (as behind a reverse proxy: no per-address cap), then the
    publisher's reconnection and a moderator: both must get in."""
    counts = {"welcomed": 0, "full": 0, "rateLimited": 0, "other": 0}
    sockets = []
    for index in range(2000):
        try:
            ws = WebSocket(source=f"127.0.0.{index % 4 + 1}")
            ws.control({"type": "hello", "token": viewer_token})
            sockets.append(ws)
        except Exception:
            counts["other"] += 1
    for ws in sockets:
        try:
            ws.sock.settimeout(5)
            message = json.loads(ws.receive())
            key = "welcomed" if message["type"] == "welcome" else message.get("code", "other")
            counts[key if key in counts else "other"] += 1
        except Exception:
            counts["other"] += 1
    _, minted = api("POST", f"/session/{session_id}/token", {"role": "moderator"})
    outcomes = []
    for token in (publisher_token, json.loads(minted)["token"]):
        ws = WebSocket()
        ws.control({"type": "hello", "token": token})
        ws.sock.settimeout(10)
        message = json.loads(ws.receive())
        outcomes.append(message["type"] if message["type"] == "welcome" else f"{message['type']} {message.get('code')}: {message.get('message')}")
        ws.sock.close()
    if outcomes != ["welcome", "welcome"]:
        FAILURES.append(f"hello flood: the publisher's reconnection and a moderator got {outcomes}")
    for ws in sockets:
        ws.sock.close()
    return f"2000 hellos: {counts}; then publisher {outcomes[0]}, moderator {outcomes[1]}"


def join_churn(session_id, publisher_token, viewer_token, stream):
    """One viewer link joins and leaves as fast as it can: each join and leave is announced to every member."""
    counts = {"joins": 0}

    def once():
        ws = WebSocket()
        ws.control({"type": "hello", "token": viewer_token})
        ws.sock.settimeout(5)
        ws.receive()
        counts["joins"] += 1
        ws.sock.close()
    for _ in range(4):
        keep_trying(once)
    return lambda: f"{counts['joins']} joins answered"


def property_spam(session_id, publisher_token, viewer_token, stream):
    """The publisher's token spams streamPropertyChanged (and publish/unpublish) on a connection of its own, while a
    viewer reading 32 KB/s (a 16 KB receive buffer, read 3.2 KB every 100 ms) watches: it must not be closed."""
    slow = WebSocket(receive_buffer=16384)
    slow.control({"type": "hello", "token": viewer_token})
    slow.control({"type": "subscribe", "streamId": stream})
    state = {"closed": None, "frames": 0}

    def read_slowly():
        slow.sock.settimeout(1)
        while not STOP.is_set():
            try:
                data = slow.sock.recv(3200)
                if not data:
                    state["closed"] = "connection closed"
                    return
                if b'"tooSlow"' in data or b'does not read' in data:
                    state["closed"] = "closed as a slow reader"
            except socket.timeout:
                pass
            except Exception as error:
                state["closed"] = str(error)
                return
            time.sleep(0.1)
    threading.Thread(target=read_slowly, daemon=True).start()
    spammer = WebSocket()
    spammer.control({"type": "hello", "token": publisher_token})
    own = wsclient.publish(spammer, "spam", PROPERTIES)
    def drain():
        # The publisher token's own answers (errors, refusals), read so that its connection is not closed for them.
        try:
            while not STOP.is_set():
                spammer.receive()
        except Exception:
            pass
    threading.Thread(target=drain, daemon=True).start()
    counts = {"sent": 0}

    def once():
        # Its own stream's properties, each a message to every member; and streams published and ended again.
        spammer.control({"type": "streamPropertyChanged", "streamId": own, "properties": PROPERTIES})
        spammer.control({"type": "publish", "name": "spam", "properties": PROPERTIES})
        counts["sent"] += 2
    keep_trying(once)

    def report():
        if state["closed"]:
            FAILURES.append(f"property spam: the viewer reading 32 KB/s was closed ({state['closed']})")
        slow.sock.close()
        spammer.sock.close()
        return f"{counts['sent']} stream changes sent; the 32 KB/s viewer: {state['closed'] or 'still connected'}"
    return report
