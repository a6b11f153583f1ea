// The HLS player's pure parts, without a page: an LL-HLS playlist as the relay writes it, where a player
// joining it starts, and what it fetches next as parts come.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { viewerModule } from './load.mjs';

const { parseMediaPlaylist, startingPoint, nextFetches, blockingURL, segmentCues } = await viewerModule('hls-playlist.js');

const lowLatency = `#EXTM3U
#EXT-X-VERSION:9
#EXT-X-TARGETDURATION:8
#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=48.0,PART-HOLD-BACK=1.500
#EXT-X-PART-INF:PART-TARGET=0.500
#EXT-X-MEDIA-SEQUENCE:4
#EXT-X-DISCONTINUITY-SEQUENCE:0
#EXT-X-MAP:URI="init-0.mp4?token=t"
#EXT-X-PROGRAM-DATE-TIME:2026-11-28T10:00:00.000Z
#EXTINF:6.200,
seg-4.m4s?token=t
#EXT-X-PROGRAM-DATE-TIME:2026-11-28T10:00:06.200Z
#EXT-X-PART:DURATION=0.400,URI="part-5.0.m4s?token=t",INDEPENDENT=YES
#EXT-X-PART:DURATION=0.400,URI="part-5.1.m4s?token=t"
#EXTINF:0.800,
seg-5.m4s?token=t
#EXT-X-DATERANGE:ID="m",CLASS="c",START-DATE="2026-11-28T10:00:07.100Z"
#EXT-X-PROGRAM-DATE-TIME:2026-11-28T10:00:07.000Z
#EXT-X-PART:DURATION=0.400,URI="part-6.0.m4s?token=t",INDEPENDENT=YES
#EXT-X-PART:DURATION=0.400,URI="part-6.1.m4s?token=t"
#EXT-X-PART:DURATION=0.400,URI="part-6.2.m4s?token=t"
#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-6.3.m4s?token=t"
`;

test('an LL-HLS playlist: closed segments with their parts, then the open one with its parts only', () => {
  const playlist = parseMediaPlaylist(lowLatency);
  assert.equal(playlist.partTarget, 0.5);
  assert.equal(playlist.canBlockReload, true);
  assert.equal(playlist.preloadHint, 'part-6.3.m4s?token=t');
  assert.deepEqual(playlist.segments.map((s) => [s.sequence, s.uri, s.parts.length]), [[4, 'seg-4.m4s?token=t', 0], [5, 'seg-5.m4s?token=t', 2], [6, null, 3]]);
  assert.equal(playlist.segments[2].dateRanges[0].ID, 'm');
  assert.equal(playlist.segments[2].programDateTime, '2026-11-28T10:00:07.000Z');
  assert.equal(playlist.segments[2].map, 'init-0.mp4?token=t');
});

test('a player joins at the newest part a keyframe starts, and follows part by part with blocking reloads', () => {
  const playlist = parseMediaPlaylist(lowLatency);
  const start = startingPoint(playlist);
  assert.deepEqual(start, { sequence: 6, part: 0 });
  const first = nextFetches(playlist, start);
  assert.deepEqual(first.fetches.map((f) => f.uri), ['part-6.0.m4s?token=t', 'part-6.1.m4s?token=t', 'part-6.2.m4s?token=t']);
  assert.deepEqual(first.cursor, { sequence: 6, part: 3 });
  assert.equal(blockingURL('stream.m3u8?token=t', first.cursor), 'stream.m3u8?token=t&_HLS_msn=6&_HLS_part=3');
  assert.equal(blockingURL('stream.m3u8', first.cursor), 'stream.m3u8?_HLS_msn=6&_HLS_part=3');
  // Segment 6 closes after its fourth part; the next playlist shows it closed and segment 7 begun.
  const later = parseMediaPlaylist(lowLatency.replace('#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-6.3.m4s?token=t"\n', `#EXT-X-PART:DURATION=0.400,URI="part-6.3.m4s?token=t"
#EXTINF:1.600,
seg-6.m4s?token=t
#EXT-X-PROGRAM-DATE-TIME:2026-11-28T10:00:08.600Z
#EXT-X-PART:DURATION=0.400,URI="part-7.0.m4s?token=t"
#EXT-X-PRELOAD-HINT:TYPE=PART,URI="part-7.1.m4s?token=t"
`));
  const next = nextFetches(later, first.cursor);
  assert.deepEqual(next.fetches.map((f) => f.uri), ['part-6.3.m4s?token=t', 'part-7.0.m4s?token=t']);
  assert.deepEqual(next.cursor, { sequence: 7, part: 1 });
});

test('a player that fell behind the parts takes whole segments; a plain playlist starts three segments back', () => {
  const playlist = parseMediaPlaylist(lowLatency);
  const behind = nextFetches(playlist, { sequence: 4, part: 0 });
  assert.deepEqual(behind.fetches.map((f) => f.uri).slice(0, 3), ['seg-4.m4s?token=t', 'part-5.0.m4s?token=t', 'part-5.1.m4s?token=t']);
  const plain = parseMediaPlaylist(['#EXTM3U', '#EXT-X-TARGETDURATION:3', '#EXT-X-MEDIA-SEQUENCE:10',
    ...[10, 11, 12, 13, 14].flatMap((n) => ['#EXTINF:2.000,', `seg-${n}.m4s`])].join('\n'));
  assert.equal(plain.partTarget, null);
  assert.deepEqual(startingPoint(plain), { sequence: 12, part: 0 });
  assert.deepEqual(nextFetches(plain, { sequence: 12, part: 0 }).fetches.map((f) => f.uri), ['seg-12.m4s', 'seg-13.m4s', 'seg-14.m4s']);
});

test('a delta playlist numbers its segments after the skipped ones', () => {
  const delta = parseMediaPlaylist(lowLatency.replace('#EXT-X-MAP:URI="init-0.mp4?token=t"\n#EXT-X-PROGRAM-DATE-TIME:2026-11-28T10:00:00.000Z\n#EXTINF:6.200,\nseg-4.m4s?token=t\n',
    '#EXT-X-SKIP:SKIPPED-SEGMENTS=1\n#EXT-X-MAP:URI="init-0.mp4?token=t"\n'));
  assert.deepEqual(delta.segments.map((s) => s.sequence), [5, 6]);
});

test("a frame's cue has its time and duration from its emsg box, which the live edge is kept by", () => {
  const scheme = new TextEncoder().encode('https://aomedia.org/emsg/ID3\0\0');
  const id3 = [0x49, 0x44, 0x33, 4, 0, 0, 0, 0, 0, 0];
  const size = 32 + scheme.length + id3.length;
  const box = new Uint8Array(size);
  const view = new DataView(box.buffer);
  view.setUint32(0, size);
  box.set(new TextEncoder().encode('emsg'), 4);
  view.setUint32(8, 0x01000000);
  view.setUint32(12, 90000);
  view.setBigUint64(16, 180000n);
  view.setUint32(24, 63000);
  view.setUint32(28, 7);
  box.set(scheme, 32);
  box.set(id3, 32 + scheme.length);
  assert.deepEqual(segmentCues(box), [{ time: 2, duration: 0.7, metadata: '(none)', captureTime: null }]);
});
