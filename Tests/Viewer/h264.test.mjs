// The viewer's h264.js, without a page: Annex B access units into the avc form every WebCodecs engine decodes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { viewerModule } from './load.mjs';

const h264 = await viewerModule('h264.js');

const sps = [0x67, 0x42, 0xc0, 0x1f, 0x8c, 0x8d, 0x40];
const pps = [0x68, 0xce, 0x3c, 0x80];
const idr = [0x65, 0xb8, 0x00, 0x04, 0x00, 0x00];
const slice = [0x41, 0x9a, 0x02];

test('a keyframe gives its description, codec string and length-prefixed slice', () => {
  const unit = new Uint8Array([0, 0, 0, 1, ...sps, 0, 0, 0, 1, ...pps, 0, 0, 1, ...idr]);
  const avc = h264.toAvc(unit);
  assert.equal(avc.codecString, 'avc1.42C01F');
  assert.deepEqual([...avc.description], [1, 0x42, 0xc0, 0x1f, 0xff, 0xe1, 0, sps.length, ...sps, 1, 0, pps.length, ...pps]);
  // The IDR slice's trailing zero bytes belong to no NAL unit (they precede a start code or end the unit).
  assert.deepEqual([...avc.data], [0, 0, 0, 4, 0x65, 0xb8, 0x00, 0x04]);
});

test('an inter frame has no description', () => {
  const avc = h264.toAvc(new Uint8Array([0, 0, 0, 1, ...slice]));
  assert.equal(avc.description, null);
  assert.deepEqual([...avc.data], [0, 0, 0, 3, ...slice]);
});

test('bytes that hold no NAL unit, or hostile lengths, are no frame and no crash', () => {
  assert.equal(h264.toAvc(new Uint8Array([])), null);
  assert.equal(h264.toAvc(new Uint8Array([1, 2, 3, 4])), null);
  const many = new Uint8Array(10000).map((_, index) => (index % 4 === 2 ? 1 : index % 4 === 3 ? 0x41 : 0));
  assert.ok(h264.nalUnits(many).length <= 256);
  const hugeSps = new Uint8Array([0, 0, 1, 0x67, ...new Array(2000).fill(0x42)]);
  assert.equal(h264.toAvc(hugeSps).description, null);
});

test('descriptions compare by their bytes', () => {
  assert.ok(h264.sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2])));
  assert.ok(!h264.sameBytes(new Uint8Array([1, 2]), new Uint8Array([1, 3])));
  assert.ok(!h264.sameBytes(null, new Uint8Array([1])));
});
