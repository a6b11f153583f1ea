"""Janus's HTTP API as the WHIP test fixtures use it (janus-whip-front.py, janus-subscriber.py)."""
import json
import random
import time
import urllib.request


class JanusAPI:
    def __init__(self, url):
        self.url = url

    def call(self, path, body):
        """POSTs `body` (a transaction id added) to the API at `path` and returns the decoded answer."""
        body = dict(body)
        body.setdefault("transaction", "%016x" % random.getrandbits(64))
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=20) as response:
            return json.loads(response.read())

    def event(self, session, transaction, timeout=20):
        """Long-polls `session` until the event answering `transaction` arrives."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with urllib.request.urlopen(f"{self.url}/{session}?maxev=1&rid={int(time.time() * 1000)}", timeout=35) as response:
                event = json.loads(response.read())
            if isinstance(event, list):
                event = event[0] if event else {}
            if event.get("transaction") == transaction and event.get("janus") == "event":
                return event
        raise TimeoutError("janus did not answer")
