#!/usr/bin/python3
"""Reads the timed metadata of a fragmented MP4 (CMAF) stream independently of screenpub: every top-level
`emsg` box (versions 0 and 1) with its ID3 message parsed by mutagen. Prints one JSON object per box.
Usage: read-emsg-id3.py FILE..."""
import io
import json
import struct
import sys

from mutagen.id3 import ID3


def boxes(data):
    offset = 0
    while offset + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if size < 8:
            raise SystemExit(f"bad box size {size} at {offset}")
        yield kind.decode("latin-1"), data[offset + 8:offset + size]
        offset += size


def cstring(data, offset):
    end = data.index(b"\0", offset)
    return data[offset:end].decode("utf-8"), end + 1


def emsg(body):
    version = body[0]
    if version == 1:
        timescale, time, duration, identifier = struct.unpack(">IQII", body[4:24])
        scheme, offset = cstring(body, 24)
        value, offset = cstring(body, offset)
    else:
        scheme, offset = cstring(body, 4)
        value, offset = cstring(body, offset)
        timescale, delta, duration, identifier = struct.unpack(">IIII", body[offset:offset + 16])
        time = None
        offset += 16
    message = body[offset:]
    event = {"version": version, "scheme": scheme, "value": value, "timescale": timescale, "time": time,
             "duration": duration, "id": identifier}
    if scheme == "https://aomedia.org/emsg/ID3":
        tag = ID3(io.BytesIO(message))
        event["id3version"] = list(tag.version)
        event["priv"] = {frame.owner: frame.data.hex() for frame in tag.getall("PRIV")}
        event["txxx"] = {frame.desc: str(frame.text[0]) for frame in tag.getall("TXXX")}
    return event


for path in sys.argv[1:]:
    with open(path, "rb") as handle:
        data = handle.read()
    for kind, body in boxes(data):
        if kind == "emsg":
            print(json.dumps(emsg(body)))
