// What the viewer's HLS player reads, as pure functions (tested in node): a media playlist with its LL-HLS
// parts, where to start and what to fetch next, and the frames' ID3 metadata in a CMAF part or segment.
import { describeMetadata } from './wire.js';

const ID3_SCHEME = 'https://aomedia.org/emsg/ID3';
const METADATA_OWNER = 'screenpub.metadata';
const CAPTURE_TIME = 'screenpub.capture-time';
/// Without parts (a plain HLS server), a player starts this many segments from the live edge.
export const LIVE_EDGE_SEGMENTS = 3;

/// The attribute list of a playlist tag (NAME=value,NAME="quoted, text"), quotes removed.
export function hlsAttributes(list) {
  const result = {};
  const pattern = /([A-Z0-9-]+)=("[^"]*"|[^,]*)/g;
  let match;
  while ((match = pattern.exec(list)) !== null) result[match[1]] = match[2].replace(/^"|"$/g, '');
  return result;
}

/// The variants of a multivariant playlist, in its order: `{ codecs, bandwidth, uri }` for each
/// `#EXT-X-STREAM-INF` and the URI on the line after it.
export function parseMultivariantPlaylist(text) {
  const variants = [];
  let pending = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-STREAM-INF:')) {
      const attributes = hlsAttributes(line.slice(18));
      pending = { codecs: attributes.CODECS || '', bandwidth: Number(attributes.BANDWIDTH) || 0 };
    } else if (pending && line && !line.startsWith('#')) {
      variants.push({ ...pending, uri: line });
      pending = null;
    }
  }
  return variants;
}

/// A media playlist: its segments in order, each with its date, the init segment in force, the date ranges
/// ahead of it and its parts; the last one, still being written, has no `uri` (only parts). `partTarget` is set
/// when the server writes parts, `canBlockReload` when it holds a request until a part is out.
export function parseMediaPlaylist(text) {
  const playlist = { targetDuration: 2, mediaSequence: 0, segments: [], partTarget: null, canBlockReload: false, preloadHint: null, skipped: 0 };
  let pending = { dateRanges: [], parts: [] };
  let map = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-TARGETDURATION:')) playlist.targetDuration = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-MEDIA-SEQUENCE:')) playlist.mediaSequence = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-SKIP:')) playlist.skipped = Number(hlsAttributes(line.slice(12))['SKIPPED-SEGMENTS']) || 0;
    else if (line.startsWith('#EXT-X-SERVER-CONTROL:')) playlist.canBlockReload = hlsAttributes(line.slice(22))['CAN-BLOCK-RELOAD'] === 'YES';
    else if (line.startsWith('#EXT-X-PART-INF:')) playlist.partTarget = Number(hlsAttributes(line.slice(16))['PART-TARGET']) || null;
    else if (line.startsWith('#EXT-X-PRELOAD-HINT:')) playlist.preloadHint = hlsAttributes(line.slice(20)).URI || null;
    else if (line.startsWith('#EXT-X-MAP:')) map = hlsAttributes(line.slice(11)).URI;
    else if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:')) pending.programDateTime = line.slice(25);
    else if (line.startsWith('#EXT-X-DATERANGE:')) pending.dateRanges.push(hlsAttributes(line.slice(17)));
    else if (line.startsWith('#EXT-X-PART:')) {
      const part = hlsAttributes(line.slice(12));
      pending.parts.push({ uri: part.URI, duration: Number(part.DURATION), independent: part.INDEPENDENT === 'YES', index: pending.parts.length });
    } else if (line.startsWith('#EXTINF:')) pending.duration = parseFloat(line.slice(8));
    else if (line && !line.startsWith('#')) {
      const sequence = playlist.mediaSequence + playlist.skipped + playlist.segments.length;
      playlist.segments.push({ ...pending, uri: line, map, sequence });
      pending = { dateRanges: [], parts: [] };
    }
  }
  if (pending.parts.length || pending.dateRanges.length) {
    const sequence = playlist.mediaSequence + playlist.skipped + playlist.segments.length;
    playlist.segments.push({ ...pending, uri: null, map, sequence });
  }
  return playlist;
}

/// Where a player joining `playlist` starts (`{ sequence, part }`: the next thing to fetch): the newest part a
/// keyframe starts, so it shows the live picture at once; a whole segment a few from the edge when the server
/// writes no parts.
export function startingPoint(playlist) {
  for (let s = playlist.segments.length - 1; s >= 0; s--) {
    const segment = playlist.segments[s];
    for (let p = segment.parts.length - 1; p >= 0; p--) {
      if (segment.parts[p].independent) return { sequence: segment.sequence, part: p };
    }
  }
  const closed = playlist.segments.filter((segment) => segment.uri);
  const first = closed[Math.max(0, closed.length - LIVE_EDGE_SEGMENTS)];
  return { sequence: first ? first.sequence : playlist.mediaSequence, part: 0 };
}

/// What to fetch from `playlist`, in order, for a player whose next thing is `cursor`, and where it is after
/// them: the parts from the cursor on, or a whole segment whose parts are no longer listed (one fell behind).
export function nextFetches(playlist, cursor) {
  const fetches = [];
  let { sequence, part } = cursor;
  for (const segment of playlist.segments) {
    if (segment.sequence < sequence) continue;
    if (segment.sequence > sequence) part = 0;
    sequence = segment.sequence;
    if (segment.parts.length) {
      for (const item of segment.parts.slice(part)) fetches.push({ uri: item.uri, map: segment.map, segment });
      part = Math.max(part, segment.parts.length);
    } else if (segment.uri) {
      fetches.push({ uri: segment.uri, map: segment.map, segment });
    }
    if (!segment.uri) break;  // still being written: its next part comes next
    sequence += 1;
    part = 0;
  }
  return { fetches, cursor: { sequence, part } };
}

/// `url` with the query of a blocking reload for `cursor` (RFC 8216bis `_HLS_msn`, `_HLS_part`) added.
export function blockingURL(url, cursor) {
  return `${url}${url.includes('?') ? '&' : '?'}_HLS_msn=${cursor.sequence}&_HLS_part=${cursor.part}`;
}

/// The ID3 frames we read (PRIV by owner, TXXX by description) of one tag; null if it is not ID3v2.3/2.4.
export function parseID3(bytes) {
  if (bytes.length < 10 || bytes[0] !== 0x49 || bytes[1] !== 0x44 || bytes[2] !== 0x33) return null;
  const synchsafe = (o) => (bytes[o] << 21) | (bytes[o + 1] << 14) | (bytes[o + 2] << 7) | bytes[o + 3];
  const version = bytes[3];
  const end = Math.min(bytes.length, 10 + synchsafe(6));
  const result = { priv: {}, txxx: {} };
  const text = new TextDecoder();
  let offset = 10;
  while (offset + 10 <= end) {
    const id = String.fromCharCode(...bytes.subarray(offset, offset + 4));
    const size = version === 4 ? synchsafe(offset + 4) : new DataView(bytes.buffer, bytes.byteOffset).getUint32(offset + 4);
    const body = bytes.subarray(offset + 10, offset + 10 + size);
    if (id === 'PRIV') {
      const zero = body.indexOf(0);
      if (zero >= 0) result.priv[text.decode(body.subarray(0, zero))] = body.subarray(zero + 1);
    } else if (id === 'TXXX' && (body[0] === 3 || body[0] === 0)) {
      const zero = body.indexOf(0, 1);
      if (zero >= 0) result.txxx[text.decode(body.subarray(1, zero))] = text.decode(body.subarray(zero + 1)).replace(/\0$/, '');
    } else if (!/^[A-Z0-9]{4}$/.test(id)) break;
    offset += 10 + size;
  }
  return result;
}

/// The frames' metadata in a CMAF part or segment, from every top-level version-1 `emsg` box with an ID3 message,
/// with each frame's time and duration (the box's, which are the frame's).
export function segmentCues(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = new TextDecoder();
  const cues = [];
  let offset = 0;
  while (offset + 8 <= bytes.length) {
    const size = view.getUint32(offset);
    const type = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8));
    if (size < 8 || offset + size > bytes.length) break;
    if (type === 'emsg' && bytes[offset + 8] === 1) {
      const timescale = view.getUint32(offset + 12);
      const time = Number(view.getBigUint64(offset + 16));
      let cursor = offset + 32;
      const schemeEnd = bytes.indexOf(0, cursor);
      const scheme = text.decode(bytes.subarray(cursor, schemeEnd));
      cursor = bytes.indexOf(0, schemeEnd + 1) + 1;
      if (scheme === ID3_SCHEME && timescale > 0) {
        const id3 = parseID3(bytes.subarray(cursor, offset + size));
        if (id3) {
          cues.push({
            time: time / timescale,
            duration: view.getUint32(offset + 24) / timescale,
            metadata: id3.priv[METADATA_OWNER] ? describeMetadata(id3.priv[METADATA_OWNER]) : '(none)',
            captureTime: id3.txxx[CAPTURE_TIME] || null,
          });
        }
      }
    }
    offset += size;
  }
  return cues;
}
