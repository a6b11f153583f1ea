// Pairs the frames a WebRTC <video> shows with screenpub's frame metadata messages (docs/protocol.md, "Frame
// metadata over WebRTC"), for any SFU that forwards the publisher's data channel: Janus here, another SFU's own
// viewer the same way.
//
//   import { FrameMetadataPairing } from "./frame-metadata.js";
//   const pairing = new FrameMetadataPairing();
//   dataChannel.binaryType = "arraybuffer";
//   dataChannel.onmessage = (event) => pairing.addMessage(event.data);
//   pairing.watch(videoElement, (shown) => { ... shown.metadata, shown.captureToDisplayMs ... });
//
// An SFU rewrites RTP timestamps by a constant per subscription (Janus starts a subscriber's at its first packet;
// LiveKit's forwarder shifts them when it switches layers or publishers): the module learns that offset. Each shown
// frame votes for every offset between its rtpTimestamp and a recent message's; the true one wins from the second
// frame on (frame intervals from a capture clock are not all equal to the 90 kHz tick). It is learnt again when
// frames stop finding their messages (the publisher reconnected). Every message is checked before use: the data
// channel is another party's input.

export const MESSAGE_VERSION = 1;
export const HEADER_SIZE = 15;
export const MAX_METADATA = 32;
const HISTORY = 256;          // messages kept (about 25 s at 10 fps)
const MISSES_BEFORE_RELEARN = 5;

/// Reads one message (an ArrayBuffer or typed array); null when it is not a version-1 message.
export function parseFrameMessage(data) {
  let bytes;
  if (data instanceof ArrayBuffer) bytes = new Uint8Array(data);
  else if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  else return null;
  if (bytes.length < HEADER_SIZE || bytes[0] !== MESSAGE_VERSION) return null;
  const length = bytes[14];
  if (length > MAX_METADATA || bytes.length - HEADER_SIZE < length) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const captureMicros = view.getBigInt64(6);
  // Beyond ±2^53 µs a number loses whole microseconds: such a time is not a capture time.
  if (captureMicros > 9007199254740991n || captureMicros < -9007199254740991n) return null;
  return {
    keyframe: (bytes[1] & 1) !== 0,
    rtpTimestamp: view.getUint32(2),
    captureMs: Number(captureMicros) / 1000,
    metadata: bytes.slice(HEADER_SIZE, HEADER_SIZE + length),
  };
}

/// The metadata as text when it is printable UTF-8, else as hex.
export function describeMetadata(bytes) {
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    if (!/[\u0000-\u001f\u007f]/.test(text)) return text;
  } catch (_) { /* not UTF-8 */ }
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export class FrameMetadataPairing {
  constructor() {
    this.messages = [];            // newest last, at most HISTORY
    this.byTimestamp = new Map();  // rtpTimestamp -> message
    this.offset = null;            // shown rtpTimestamp - sent rtpTimestamp (mod 2^32)
    this.votes = new Map();
    this.misses = 0;
    this.rejected = 0;             // messages that were not version-1 messages
    this.waiting = null;           // the frame on screen whose message had not come yet: {rtpTimestamp, displayMs, late}
  }

  /// A data-channel message arrived; false when it was refused.
  addMessage(data) {
    const message = parseFrameMessage(data);
    if (!message) { this.rejected += 1; return false; }
    this.messages.push(message);
    this.byTimestamp.set(message.rtpTimestamp, message);
    while (this.messages.length > HISTORY) {
      const old = this.messages.shift();
      if (this.byTimestamp.get(old.rtpTimestamp) === old) this.byTimestamp.delete(old.rtpTimestamp);
    }
    // The data channel and the picture travel apart through an SFU: a message may come just after its frame was
    // shown. The frame still on screen gets it then.
    const waiting = this.waiting;
    if (waiting && this.offset !== null && ((waiting.rtpTimestamp - this.offset) >>> 0) === message.rtpTimestamp) {
      this.waiting = null;
      this.misses = 0;
      waiting.late(message);
    }
    return true;
  }

  /// The message of the frame shown with `rtpTimestamp` (as requestVideoFrameCallback reports it); null while the
  /// offset is still unknown or the message did not come.
  messageFor(rtpTimestamp) {
    if (!Number.isInteger(rtpTimestamp) || rtpTimestamp < 0 || rtpTimestamp > 0xffffffff) return null;
    if (this.offset !== null) {
      const message = this.byTimestamp.get((rtpTimestamp - this.offset) >>> 0);
      if (message) { this.misses = 0; return message; }
      this.misses += 1;
      if (this.misses < MISSES_BEFORE_RELEARN) return null;
      this.offset = null;
      this.votes.clear();
    }
    return this.learn(rtpTimestamp);
  }

  learn(rtpTimestamp) {
    for (const message of this.messages) {
      const offset = (rtpTimestamp - message.rtpTimestamp) >>> 0;
      this.votes.set(offset, (this.votes.get(offset) || 0) + 1);
    }
    let best = null, bestVotes = 0, second = 0;
    for (const [offset, count] of this.votes) {
      if (count > bestVotes) { second = bestVotes; best = offset; bestVotes = count; } else if (count > second) second = count;
    }
    if (this.votes.size > 8 * HISTORY) this.votes.clear();   // bounded: votes start again
    if (bestVotes < 2 || bestVotes === second) return null;
    this.offset = best;
    this.misses = 0;
    this.votes.clear();
    return this.byTimestamp.get((rtpTimestamp - best) >>> 0) || null;
  }

  /// Calls `onFrame({rtpTimestamp, message, metadata, captureToDisplayMs, late})` for every frame `video` shows
  /// (requestVideoFrameCallback); message/metadata and captureToDisplayMs null when unpaired. A frame still on
  /// screen whose message comes after it was shown is reported again with `late: true` (capture → display then
  /// still counts from its display).
  watch(video, onFrame) {
    const report = (rtpTimestamp, message, displayMs, late) => onFrame({
      rtpTimestamp,
      message,
      metadata: message ? describeMetadata(message.metadata) : null,
      captureToDisplayMs: message ? displayMs - message.captureMs : null,
      late,
    });
    const step = (now, frame) => {
      const rtpTimestamp = Number.isInteger(frame.rtpTimestamp) ? frame.rtpTimestamp : null;
      const message = rtpTimestamp === null ? null : this.messageFor(rtpTimestamp);
      // The wall clock at the frame's expected display: exact on one machine, otherwise as good as clock sync.
      const displayMs = performance.timeOrigin + (frame.expectedDisplayTime || now);
      this.waiting = message || rtpTimestamp === null ? null
        : { rtpTimestamp, late: (arrived) => report(rtpTimestamp, arrived, displayMs, true) };
      report(rtpTimestamp, message, displayMs, false);
      video.requestVideoFrameCallback(step);
    };
    video.requestVideoFrameCallback(step);
  }
}
