// The viewer's wire.js, without a page: `node --test Tests/Viewer/*.test.mjs`. ViewerWireTests runs it from
// `swift test` with SCREENPUB_WIRE_FIXTURE naming messages that screenpub's own Swift side wrote, so that both
// ends of the protocol are checked against each other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { viewerModule } from './load.mjs';

const wire = await viewerModule('wire.js');

/// A media message as docs/protocol.md lays it out.
function message({ version = 2, flags = 0, codec = 2, kind = 0, streamId = 7, width = 640, height = 360, sequence = 3,
  value = 1500000000n, timescale = 1000000000, wallClockMs = 1700000000123n, metadata = [], payload = [1, 2, 3] } = {}) {
  const buffer = new ArrayBuffer(48 + metadata.length + payload.length);
  const view = new DataView(buffer);
  view.setUint16(0, 0x5350);
  view.setUint8(2, version);
  view.setUint8(3, 48);
  view.setUint8(4, flags);
  view.setUint8(5, codec);
  view.setUint8(6, metadata.length);
  view.setUint8(7, kind);
  view.setUint32(8, streamId);
  view.setUint16(12, width);
  view.setUint16(14, height);
  view.setBigUint64(16, BigInt(sequence));
  view.setBigInt64(24, value);
  view.setInt32(32, timescale);
  view.setBigInt64(36, wallClockMs);
  view.setUint32(44, payload.length);
  new Uint8Array(buffer).set([...metadata, ...payload], 48);
  return buffer;
}

test('a video frame keeps its fields, metadata and payload', () => {
  const frame = wire.parseMediaFrame(message({ flags: 1, codec: 3, metadata: [...Buffer.from('step 4')] }));
  assert.equal(frame.kind, 'video');
  assert.equal(frame.keyframe, true);
  assert.equal(frame.keepalive, false);
  assert.equal(frame.catchUp, false);
  assert.equal(frame.codec, 3);
  assert.deepEqual([frame.streamId, frame.width, frame.height, frame.sequence], [7, 640, 360, 3]);
  assert.equal(frame.wallClockMs, 1700000000123);
  assert.equal(wire.describeMetadata(frame.metadata), 'step 4');
  assert.deepEqual([...frame.payload], [1, 2, 3]);
  assert.equal(wire.parseMediaFrame(message({ version: 1, kind: 0 })).kind, 'video');
});

test('a catch-up frame says so, beside its layer', () => {
  const frame = wire.parseMediaFrame(message({ flags: 16 | (2 << 2) }));
  assert.equal(frame.catchUp, true);
  assert.equal(frame.layer, 2);
  assert.equal(frame.keyframe, false);
});

test('an audio frame has its channels, samples and capture time in microseconds', () => {
  const frame = wire.parseMediaFrame(message({ kind: 1, codec: 1, flags: 4, width: 2, height: 960, payload: [9] }));
  assert.equal(frame.kind, 'audio');
  assert.equal(frame.silence, true);
  assert.deepEqual([frame.channels, frame.samples, frame.captureUs], [2, 960, 1500000]);
});

test('a video frame carries its temporal layer in flag bits 2–3', () => {
  const frame = wire.parseMediaFrame(message({ flags: 1 | (2 << 2) }));
  assert.equal(frame.keyframe, true);
  assert.equal(frame.layer, 2);
  assert.equal(wire.parseMediaFrame(message({ flags: 0 })).layer, 0);
});

test('a kind of a later version is skipped, not refused', () => {
  assert.equal(wire.parseMediaFrame(message({ kind: 9 })), null);
});

test('malformed and hostile messages are errors that say what is wrong', () => {
  const cases = [
    [new ArrayBuffer(10), /shorter than its header/],
    [(() => { const b = message(); new DataView(b).setUint16(0, 0x4142); return b; })(), /magic/],
    [message({ version: 3 }), /version 3/],
    [message({ metadata: new Array(33).fill(65) }), /exceeds 32/],
    [(() => { const b = message(); new DataView(b).setUint32(44, 99); return b; })(), /inconsistent/],
    [(() => { const b = message(); new DataView(b).setUint32(44, 0xffffffff); return b; })(), /too large/],
    [message({ codec: 9 }), /unknown codec/],
    [message({ kind: 1, codec: 1, width: 3 }), /3 channels/],
    [message({ kind: 1, codec: 1, width: 1, timescale: 0 }), /timescale/],
  ];
  for (const [buffer, error] of cases) assert.throws(() => wire.parseMediaFrame(buffer), error);
});

test('the decoder is configured with the codec string the publisher announced, else the usual one', () => {
  assert.equal(wire.decoderCodecString({ codecString: 'av01.0.12M.08' }, 3), 'av01.0.12M.08');
  assert.equal(wire.decoderCodecString({}, 3), 'av01.0.08M.08');
  assert.equal(wire.decoderCodecString(undefined, 2), 'vp09.00.10.08');
  // Another codec's string, or something that is not a codec string, is not used.
  assert.equal(wire.decoderCodecString({ codecString: 'vp09.00.10.08' }, 3), 'av01.0.08M.08');
  assert.equal(wire.decoderCodecString({ codecString: 'av01.<script>' }, 3), 'av01.0.08M.08');
});

test('a browser without a decoder for the stream is told which codec and what to do', () => {
  assert.equal(wire.describeCodec('av01.1.08M.08.0.000.06.06.06.0'), 'AV1 High profile (4:4:4 colour)');
  assert.equal(wire.describeCodec('vp09.00.40.08'), 'VP9');
  const text = wire.unsupportedCodecText('vp09.01.40.08.03.06.06.06.00');
  assert.match(text, /^This browser cannot decode the stream: it is VP9 profile 1 \(4:4:4 colour\)/);
  assert.match(text, /--chroma 420/);
  assert.doesNotMatch(wire.unsupportedCodecText('av01.0.08M.08'), /--chroma/);
  // The long 4:4:4 forms are codec strings the decoder is configured with.
  assert.equal(wire.decoderCodecString({ codecString: 'av01.1.08M.08.0.000.06.06.06.0' }, 3), 'av01.1.08M.08.0.000.06.06.06.0');
  assert.equal(wire.decoderCodecString({ codecString: 'vp09.01.40.08.03.06.06.06.00' }, 2), 'vp09.01.40.08.03.06.06.06.00');
});

test('the rendition line names the codec people know and the exact codec string', () => {
  assert.equal(wire.renditionText('av01.0.08M.08'), 'AV1 (av01.0.08M.08)');
  assert.equal(wire.renditionText('avc1.640028'), 'H.264 (avc1.640028)');
  assert.equal(wire.renditionText('vp09.00.10.08'), 'VP9 (vp09.00.10.08)');
  assert.equal(wire.renditionText('av01.1.08H.08'), 'AV1 High profile (4:4:4 colour) (av01.1.08H.08)');
});

test('names, metadata and medians as the page shows them', () => {
  assert.equal(wire.displayName('subscriber', 'name=Ada&team=x'), 'Ada');
  assert.equal(wire.displayName('publisher', ''), 'the presenter');
  assert.equal(wire.describeMetadata(new Uint8Array([0xff, 0x00])), '0xff00');
  assert.equal(wire.describeMetadata(new Uint8Array()), '(none)');
  assert.equal(wire.median([5, 1, 3]), 3);
  assert.ok(Number.isNaN(wire.median([])));
});

test('messages written by screenpub parse as it wrote them', { skip: !process.env.SCREENPUB_WIRE_FIXTURE }, () => {
  const cases = JSON.parse(readFileSync(process.env.SCREENPUB_WIRE_FIXTURE, 'utf8'));
  assert.ok(cases.length > 0);
  for (const expected of cases) {
    const bytes = Buffer.from(expected.base64, 'base64');
    const frame = wire.parseMediaFrame(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    assert.equal(frame.kind, expected.kind);
    assert.equal(frame.streamId, expected.streamId);
    assert.equal(frame.sequence, expected.sequence);
    assert.equal(frame.wallClockMs, expected.wallClockMs);
    assert.equal(frame.payload.length, expected.payloadLength);
    if (expected.kind === 'video') {
      assert.equal(frame.keyframe, expected.keyframe);
      assert.deepEqual([frame.width, frame.height, frame.codec], [expected.width, expected.height, expected.codec]);
      assert.equal(wire.describeMetadata(frame.metadata), expected.metadata);
    } else {
      assert.deepEqual([frame.channels, frame.samples, frame.captureUs], [expected.channels, expected.samples, expected.captureUs]);
    }
  }
});
