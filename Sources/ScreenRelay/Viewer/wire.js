// The relay protocol as the viewer reads it (docs/protocol.md): pure functions, no page, no network, so that
// they are tested on their own (`node --test Tests/Viewer/*.test.mjs`).

export const HEADER_SIZE = 48;
export const MAGIC = 0x5350; // "SP"
// Media frame versions read here: 1 (video) and 2 (a kind byte at offset 7: 0 video, 1 audio).
export const WIRE_VERSIONS = [1, 2];
export const KIND_VIDEO = 0;
export const KIND_AUDIO = 1;
export const FLAG_SILENCE = 4;
export const AUDIO_CODECS = { 1: 'opus' };
export const FLAG_KEYFRAME = 1;
export const FLAG_KEEPALIVE = 2;
// Bit 4: a cached picture the relay sends to bring the decoder to the newest one: decoded, not shown
// (protocol 5; the viewer subscribes with `catchUp`).
export const FLAG_CATCH_UP = 16;
// Bits 2–3 of a video frame's flags: its temporal layer (protocol 3; the viewer subscribes with `layers`).
export const LAYER_SHIFT = 2;
export const MAX_METADATA = 32;
export const MAX_PAYLOAD = 8 * 1024 * 1024;
// WebCodecs codec strings by the header's codec number, for a publisher that does not announce its own in the
// stream's properties (`codecString`): VP9 profile 0, level 1.0, 8-bit (what libvpx produces for
// screenpub's I420); AV1 main profile, level 4.0, 8-bit; H.264 Constrained Baseline, level 4.0 (openh264's).
export const CODEC_VP8 = 1;
export const CODEC_VP9 = 2;
export const CODEC_AV1 = 3;
export const CODEC_H264 = 4;
export const WEBCODECS_CODEC = { [CODEC_VP8]: 'vp8', [CODEC_VP9]: 'vp09.00.10.08', [CODEC_AV1]: 'av01.0.08M.08', [CODEC_H264]: 'avc1.42C028' };
export const CODEC_NAME = { [CODEC_VP8]: 'VP8', [CODEC_VP9]: 'VP9', [CODEC_AV1]: 'AV1', [CODEC_H264]: 'H.264' };
// What a subscriber says it decodes when it decodes screenpub's H.264 rendition (protocol 7's `decodes`).
export const H264_RENDITION_PREFIX = 'avc1.42';

/// Parses one binary media message (a video or audio frame; null for a kind of a later version); throws an
/// Error naming what is wrong.
export function parseMediaFrame(buffer) {
  if (buffer.byteLength < HEADER_SIZE) throw new Error(`media frame of ${buffer.byteLength} bytes is shorter than its header`);
  const view = new DataView(buffer);
  if (view.getUint16(0) !== MAGIC) throw new Error('media frame without the SP magic');
  const version = view.getUint8(2);
  if (!WIRE_VERSIONS.includes(version)) throw new Error(`media frame version ${version} is not supported`);
  if (view.getUint8(3) !== HEADER_SIZE) throw new Error('media frame header length is not 48');
  const kind = version === 1 ? KIND_VIDEO : view.getUint8(7);
  if (kind === KIND_AUDIO) return parseAudioFrame(view, buffer);
  if (kind !== KIND_VIDEO) return null; // a kind of a later version: ignored
  const flags = view.getUint8(4);
  const codec = view.getUint8(5);
  const metadataLength = view.getUint8(6);
  const payloadLength = view.getUint32(44);
  if (metadataLength > MAX_METADATA) throw new Error(`frame metadata of ${metadataLength} bytes exceeds ${MAX_METADATA}`);
  if (payloadLength > MAX_PAYLOAD) throw new Error('media payload too large');
  if (HEADER_SIZE + metadataLength + payloadLength !== buffer.byteLength) throw new Error('media frame lengths are inconsistent');
  if (!(codec in WEBCODECS_CODEC)) throw new Error(`unknown codec ${codec}`);
  return {
    kind: 'video',
    keyframe: (flags & FLAG_KEYFRAME) !== 0,
    keepalive: (flags & FLAG_KEEPALIVE) !== 0,
    catchUp: (flags & FLAG_CATCH_UP) !== 0,
    layer: (flags >> LAYER_SHIFT) & 3,
    codec,
    streamId: view.getUint32(8),
    width: view.getUint16(12),
    height: view.getUint16(14),
    sequence: Number(view.getBigUint64(16)),
    wallClockMs: Number(view.getBigInt64(36)),
    metadata: new Uint8Array(buffer, HEADER_SIZE, metadataLength),
    payload: new Uint8Array(buffer, HEADER_SIZE + metadataLength, payloadLength),
  };
}

function parseAudioFrame(view, buffer) {
  const codec = view.getUint8(5);
  const channels = view.getUint16(12);
  const payloadLength = view.getUint32(44);
  if (!(codec in AUDIO_CODECS)) throw new Error(`unknown audio codec ${codec}`);
  if (channels < 1 || channels > 2) throw new Error(`audio frame with ${channels} channels`);
  if (HEADER_SIZE + payloadLength !== buffer.byteLength) throw new Error('audio frame lengths are inconsistent');
  const timescale = view.getInt32(32);
  if (timescale <= 0) throw new Error('audio frame timescale is not positive');
  return {
    kind: 'audio',
    codec,
    silence: (view.getUint8(4) & FLAG_SILENCE) !== 0,
    streamId: view.getUint32(8),
    channels,
    samples: view.getUint16(14),
    sequence: Number(view.getBigUint64(16)),
    captureUs: Number(view.getBigInt64(24) * 1000000n / BigInt(timescale)),
    wallClockMs: Number(view.getBigInt64(36)),
    payload: new Uint8Array(buffer, HEADER_SIZE, payloadLength),
  };
}

/// Metadata as text when it is UTF-8, else as hex.
export function describeMetadata(bytes) {
  if (bytes.length === 0) return '(none)';
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return '0x' + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }
}

export function median(values) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/// The WebCodecs codec string to decode a stream with: what its publisher announced in the stream's properties
/// (the AV1 sequence header's profile, level and depth), else the codec's usual one.
export function decoderCodecString(properties, codec) {
  const announced = properties && typeof properties.codecString === 'string' ? properties.codecString : null;
  const family = { 1: 'vp8', 2: 'vp09.', 3: 'av01.', 4: 'avc1.' }[codec];
  if (announced && family && announced.startsWith(family) && /^[a-z0-9.]{3,40}$/i.test(announced)) return announced;
  return WEBCODECS_CODEC[codec];
}

/// The codec a codec string names, as people know it: "AV1 High profile (4:4:4 colour)", "VP9", "H.264".
export function describeCodec(codecString) {
  const text = String(codecString || '');
  if (text.startsWith('av01.')) return text.startsWith('av01.1.') ? 'AV1 High profile (4:4:4 colour)' : 'AV1';
  if (text.startsWith('vp09.')) return text.startsWith('vp09.01.') ? 'VP9 profile 1 (4:4:4 colour)' : 'VP9';
  if (text.startsWith('avc1.')) return 'H.264';
  return text.startsWith('vp8') ? 'VP8' : (text || 'this codec');
}

/// The rendition a page plays, as its status area shows it: "AV1 (av01.0.08M.08)", "H.264 (avc1.640028)".
export function renditionText(codecString) {
  return `${describeCodec(codecString)} (${codecString})`;
}

/// What a viewer whose browser has no decoder for the stream is told, instead of a black picture.
export function unsupportedCodecText(codecString) {
  const what = describeCodec(codecString);
  const remedy = String(codecString || '').match(/^(av01\.1|vp09\.01)\./)
    ? 'Ask the presenter to share with --chroma 420, or watch in a current Chrome, Edge or Firefox.'
    : 'Watch in a current Chrome, Edge or Firefox, or use screensub.';
  return `This browser cannot decode the stream: it is ${what} (${codecString}). ${remedy}`;
}

/// A participant's name: the `name` field of its token's connection data (`name=Ada`), else what it is.
export function displayName(role, data) {
  let name = null;
  try { name = new URLSearchParams(data || '').get('name'); } catch { name = null; }
  if (name && name.trim()) return name.trim().slice(0, 64);
  return { publisher: 'the presenter', moderator: 'a moderator', subscriber: 'a viewer' }[role] || 'someone';
}

/// What to tell the viewer about what the relay sends it (`subscriptionChanged`): null while it gets every
/// frame; else that its connection is slow and at what frame rate it sees the stream (each layer left out halves
/// it), or that it waits for a fresh picture.
export function receptionText({ highestLayer, layers, waitingForKeyframe }, framesPerSecond) {
  if (waitingForKeyframe) return 'Your connection is slow: waiting for a fresh picture';
  if (highestLayer >= layers - 1) return null;
  const rate = (framesPerSecond || 0) / 2 ** (layers - 1 - highestLayer);
  return `Your connection is slow: showing ${Math.round(rate * 10) / 10} fps`;
}
