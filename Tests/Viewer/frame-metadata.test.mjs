// The WHIP viewer's frame-metadata.js without a page: `node --test Tests/Viewer/frame-metadata.test.mjs`.
// WHIPFrameMetadataModuleTests runs it from `swift test` with SCREENPUB_FRAME_MESSAGES naming messages that
// screenpub's WHIPFrameMessage wrote, so that both ends are checked against each other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// An ES module served as .js: copied beside a package.json that tells node so.
const copy = mkdtempSync(join(tmpdir(), 'screenpub-whip-viewer-'));
cpSync(fileURLToPath(new URL('../../packaging/whip-viewer/frame-metadata.js', import.meta.url)), join(copy, 'frame-metadata.js'));
writeFileSync(join(copy, 'package.json'), '{"type": "module"}\n');
process.on('exit', () => rmSync(copy, { recursive: true, force: true }));
const { parseFrameMessage, describeMetadata, FrameMetadataPairing } = await import(join(copy, 'frame-metadata.js'));

function message({ version = 1, flags = 0, rtpTimestamp = 0, captureMicros = 1700000000000000n, metadata = [] } = {}) {
  const bytes = new Uint8Array(15 + metadata.length);
  const view = new DataView(bytes.buffer);
  bytes[0] = version;
  bytes[1] = flags;
  view.setUint32(2, rtpTimestamp);
  view.setBigInt64(6, captureMicros);
  bytes[14] = metadata.length;
  bytes.set(metadata, 15);
  return bytes.buffer;
}

test('messages screenpub wrote read as it meant them', { skip: !process.env.SCREENPUB_FRAME_MESSAGES }, () => {
  const cases = JSON.parse(readFileSync(process.env.SCREENPUB_FRAME_MESSAGES, 'utf8'));
  assert.ok(cases.length >= 2);
  for (const expected of cases) {
    const parsed = parseFrameMessage(new Uint8Array(Buffer.from(expected.base64, 'base64')));
    assert.equal(parsed.rtpTimestamp, expected.rtpTimestamp);
    assert.equal(parsed.keyframe, expected.keyframe);
    assert.equal(parsed.captureMs, expected.captureMicros / 1000);
    assert.equal(describeMetadata(parsed.metadata), expected.metadata);
  }
});

test('what is not a version-1 message is refused', () => {
  assert.equal(parseFrameMessage(new ArrayBuffer(14)), null);
  assert.equal(parseFrameMessage(message({ version: 2 })), null);
  const long = new Uint8Array(message({ metadata: new Array(33).fill(65) }));
  assert.equal(parseFrameMessage(long.buffer), null);
  const truncated = new Uint8Array(message({ metadata: [1, 2, 3] })).slice(0, 16);
  assert.equal(parseFrameMessage(truncated.buffer), null);
  assert.equal(parseFrameMessage(message({ captureMicros: 1n << 62n })), null, 'a time a number cannot hold exactly');
  assert.equal(parseFrameMessage('text'), null);
  assert.equal(parseFrameMessage(null), null);
  // Bytes after the metadata are room for additions.
  const longer = new Uint8Array(20);
  longer.set(new Uint8Array(message({ metadata: [7] })));
  assert.deepEqual(Array.from(parseFrameMessage(longer.buffer).metadata), [7]);
});

test('random bytes never throw', () => {
  for (let round = 0; round < 5000; round++) {
    const bytes = new Uint8Array(Math.floor(Math.random() * 60));
    for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
    if (bytes.length && Math.random() < 0.5) bytes[0] = 1;
    const parsed = parseFrameMessage(bytes);
    if (parsed) assert.ok(parsed.metadata.length <= 32);
  }
});

test('metadata shows as text when printable, else as hex', () => {
  assert.equal(describeMetadata(new TextEncoder().encode('frame 7')), 'frame 7');
  assert.equal(describeMetadata(new Uint8Array([0, 255])), '00ff');
});

/// Frames about 9000 ticks apart with a capture clock's jitter (±50 ticks, a seeded generator), as a publisher
/// sends them.
function timestamps(count, start = 4000000000, seed = 7) {
  const list = [];
  let t = start, state = seed;
  for (let i = 0; i < count; i++) {
    list.push(t >>> 0);
    state = (state * 1103515245 + 12345) % 2147483648;
    t += 9000 + (state % 101) - 50;
  }
  return list;
}

test('frames pair with their messages through an SFU that shifts RTP timestamps', () => {
  const pairing = new FrameMetadataPairing();
  const sent = timestamps(40);
  sent.forEach((t, i) => pairing.addMessage(message({ rtpTimestamp: t, metadata: Array.from(new TextEncoder().encode(`frame ${i}`)) })));
  const offset = 123456789;
  const found = sent.map((t) => pairing.messageFor((t + offset) >>> 0));
  assert.equal(found[0], null, 'one frame alone cannot tell the offset');
  // From the second or third frame on (a chance tie between equal intervals needs a third to break it).
  assert.ok(found[1] === null || describeMetadata(found[1].metadata) === 'frame 1');
  for (let i = 2; i < sent.length; i++) assert.equal(describeMetadata(found[i].metadata), `frame ${i}`);
});

test('shown frames that skip some still pair, and a new offset is learnt after a reconnection', () => {
  const pairing = new FrameMetadataPairing();
  const sent = timestamps(60, 10);
  sent.forEach((t, i) => pairing.addMessage(message({ rtpTimestamp: t, metadata: [i] })));
  const shown = [3, 4, 7, 8, 9, 15, 16, 20];
  const results = shown.map((i) => pairing.messageFor((sent[i] + 500) >>> 0));
  for (let k = 2; k < shown.length; k++) assert.equal(results[k].metadata[0], shown[k]);
  // The publisher came back: new timestamps, a new offset at the SFU.
  const again = timestamps(30, 77777, 99);
  again.forEach((t, i) => pairing.addMessage(message({ rtpTimestamp: t, metadata: [100 + i] })));
  const later = again.map((t) => pairing.messageFor((t + 999) >>> 0));
  const paired = later.filter((m, i) => m && m.metadata[0] === 100 + i).length;
  const wrong = later.filter((m, i) => m && m.metadata[0] !== 100 + i).length;
  assert.equal(wrong, 0);
  assert.ok(paired >= 30 - 7, `${paired} of 30 paired after the reconnection`);
});

test('hostile rtpTimestamps find nothing', () => {
  const pairing = new FrameMetadataPairing();
  for (const value of [-1, 2 ** 32, 1.5, NaN, undefined, '5']) assert.equal(pairing.messageFor(value), null);
});

test('a message that comes after its frame was shown pairs with the frame still on screen', () => {
  const pairing = new FrameMetadataPairing();
  const callbacks = [];
  const video = { requestVideoFrameCallback: (callback) => callbacks.push(callback) };
  const reports = [];
  globalThis.performance ??= { timeOrigin: 0 };
  pairing.watch(video, (shown) => reports.push(shown));
  const sent = timestamps(6, 1000, 3);
  const show = (i) => callbacks.shift()(0, { rtpTimestamp: (sent[i] + 42) >>> 0, expectedDisplayTime: 5 });
  sent.slice(0, 5).forEach((t, i) => pairing.addMessage(message({ rtpTimestamp: t, metadata: [i] })));
  for (let i = 0; i < 5; i++) show(i);
  assert.equal(reports[4].message.metadata[0], 4);
  show(5);
  assert.equal(reports[5].message, null, 'its message has not come yet');
  pairing.addMessage(message({ rtpTimestamp: sent[5], metadata: [5] }));
  assert.equal(reports.length, 7);
  assert.equal(reports[6].late, true);
  assert.equal(reports[6].message.metadata[0], 5);
  assert.equal(reports[6].rtpTimestamp, (sent[5] + 42) >>> 0);
});
