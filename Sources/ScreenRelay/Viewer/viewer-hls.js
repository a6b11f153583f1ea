// screenpub viewer, HLS mode (/view/SESSION?token=…&hls=1): plays the relay's HLS of the session through
// Media Source Extensions and shows each frame's ID3 metadata and the session's date ranges (pauses,
// recordings, markers) in sync with the picture. docs/protocol.md, "HLS", describes what it reads.
import { page, setStatus, showProblem } from './view.js';
import { describeMetadata } from './wire.js';

const ID3_SCHEME = 'https://aomedia.org/emsg/ID3';
const METADATA_OWNER = 'screenpub.metadata';
const CAPTURE_TIME = 'screenpub.capture-time';
const LIVE_EDGE_SEGMENTS = 3;

/// The attribute list of a playlist tag (NAME=value,NAME="quoted, text"), quotes removed.
function hlsAttributes(list) {
  const result = {};
  const pattern = /([A-Z0-9-]+)=("[^"]*"|[^,]*)/g;
  let match;
  while ((match = pattern.exec(list)) !== null) result[match[1]] = match[2].replace(/^"|"$/g, '');
  return result;
}

/// A media playlist's segments, each with its date, the init segment in force and the date ranges ahead of it.
function parseMediaPlaylist(text) {
  const playlist = { targetDuration: 2, mediaSequence: 0, segments: [] };
  let pending = { dateRanges: [] };
  let map = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXT-X-TARGETDURATION:')) playlist.targetDuration = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-MEDIA-SEQUENCE:')) playlist.mediaSequence = Number(line.slice(22));
    else if (line.startsWith('#EXT-X-MAP:')) map = hlsAttributes(line.slice(11)).URI;
    else if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:')) pending.programDateTime = line.slice(25);
    else if (line.startsWith('#EXT-X-DATERANGE:')) pending.dateRanges.push(hlsAttributes(line.slice(17)));
    else if (line.startsWith('#EXTINF:')) pending.duration = parseFloat(line.slice(8));
    else if (line && !line.startsWith('#')) {
      playlist.segments.push({ ...pending, uri: line, map, sequence: playlist.mediaSequence + playlist.segments.length });
      pending = { dateRanges: [] };
    }
  }
  return playlist;
}

/// The ID3 frames we read (PRIV by owner, TXXX by description) of one tag; null if it is not ID3v2.3/2.4.
function parseID3(bytes) {
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

/// The frames' metadata in a CMAF segment: every top-level version-1 `emsg` box with an ID3 message.
function segmentCues(bytes) {
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

/// Plays the session's HLS in a <video> with MSE and keeps `screenViewer` up to date for the page and for checks.
export class HLSPlayer {
  /// `state`: the page's state (what is shown, readable as `screenViewer`).
  constructor(session, token, state) {
    this.state = state;
    this.base = `/hls/${encodeURIComponent(session)}/`;
    this.query = `?token=${encodeURIComponent(token)}`;
    this.video = document.getElementById('hls-video');
    this.cues = [];
    this.dateRanges = new Map();
    this.appendedMap = null;
    this.next = null;
    this.queue = Promise.resolve();
  }

  async start() {
    page.canvas.hidden = true;
    this.video.hidden = false;
    this.state.mode = 'hls';
    this.state.dateRanges = [];
    setStatus(this.state, 'Loading the HLS stream…');
    const multivariant = await this.fetchText(this.base + 'index.m3u8' + this.query);
    const variant = multivariant.split('\n').find((line) => line.startsWith('#EXT-X-STREAM-INF:'));
    const codecs = hlsAttributes(variant ? variant.slice(18) : '').CODECS || 'vp09.00.10.08';
    this.mediaURL = new URL(multivariant.split('\n').find((line) => line && !line.startsWith('#')) || 'stream.m3u8', location.origin + this.base).href;
    const type = `video/mp4; codecs="${codecs}"`;
    if (!('MediaSource' in window) || !MediaSource.isTypeSupported(type)) {
      showProblem(this.state, `This browser cannot play ${type} through Media Source Extensions; open the viewer without &hls=1.`);
      return;
    }
    const source = new MediaSource();
    this.video.src = URL.createObjectURL(source);
    await new Promise((resolve) => source.addEventListener('sourceopen', resolve, { once: true }));
    this.buffer = source.addSourceBuffer(type);
    this.buffer.mode = 'segments';
    const onFrame = () => {
      this.showFrame();
      this.video.requestVideoFrameCallback(onFrame);
    };
    this.video.requestVideoFrameCallback(onFrame);
    setStatus(this.state, 'Watching over HLS');
    for (;;) {
      try {
        await this.poll();
      } catch (error) {
        setStatus(this.state, `HLS: ${error.message}; trying again`);
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(250, (this.targetDuration || 2) * 500)));
    }
  }

  async poll() {
    const playlist = parseMediaPlaylist(await this.fetchText(this.mediaURL));
    this.targetDuration = playlist.targetDuration;
    const first = this.next ?? Math.max(playlist.mediaSequence, playlist.mediaSequence + playlist.segments.length - LIVE_EDGE_SEGMENTS);
    for (const segment of playlist.segments) {
      for (const range of segment.dateRanges) this.noteDateRange(range);
      if (segment.sequence < first) continue;
      if (segment.map && segment.map !== this.appendedMap) {
        await this.append(await this.fetchBytes(new URL(segment.map, this.mediaURL).href));
        this.appendedMap = segment.map;
      }
      const bytes = await this.fetchBytes(new URL(segment.uri, this.mediaURL).href);
      this.cues.push(...segmentCues(bytes));
      if (this.cues.length > 2000) this.cues.splice(0, this.cues.length - 2000);
      await this.append(bytes);
      this.next = segment.sequence + 1;
      this.state.segments = (this.state.segments || 0) + 1;
      if (this.video.paused) {
        const ranges = this.video.buffered;
        if (ranges.length && this.video.currentTime < ranges.start(0)) this.video.currentTime = ranges.start(0);
        this.video.play().catch(() => {});
      }
    }
  }

  noteDateRange(range) {
    const known = this.dateRanges.get(range.ID);
    this.dateRanges.set(range.ID, { ...known, ...range });
    this.state.dateRanges = [...this.dateRanges.values()];
    const list = document.getElementById('events');
    list.replaceChildren(...this.state.dateRanges.map((r) => {
      const item = document.createElement('li');
      const name = r['X-TITLE'] || r['X-NAME'] || r.ID;
      item.textContent = `${r.CLASS.replace('com.screenpub.', '')} · ${name} · ${r['START-DATE']}${r['END-DATE'] ? ' → ' + r['END-DATE'] : r.DURATION ? ` (${r.DURATION} s)` : ''}`;
      return item;
    }));
  }

  /// The metadata of the frame on screen: the last cue at or before the video's time.
  showFrame() {
    const now = this.video.currentTime;
    let shown = null;
    for (let i = this.cues.length - 1; i >= 0; i--) {
      if (this.cues[i].time <= now + 0.001) {
        shown = this.cues[i];
        break;
      }
    }
    const quality = this.video.getVideoPlaybackQuality();
    this.state.framesDecoded = quality.totalVideoFrames - quality.droppedVideoFrames;
    this.state.width = this.video.videoWidth;
    this.state.height = this.video.videoHeight;
    page.frames.textContent = String(this.state.framesDecoded);
    page.size.textContent = `${this.state.width}×${this.state.height}`;
    if (!shown) return;
    this.state.lastMetadata = shown.metadata;
    page.metadata.textContent = shown.metadata;
    if (shown.captureTime) {
      this.state.lastLatencyMs = Date.now() - Date.parse(shown.captureTime);
      page.latency.textContent = `${(this.state.lastLatencyMs / 1000).toFixed(1)} s (HLS)`;
    }
  }

  append(bytes) {
    return new Promise((resolve, reject) => {
      this.buffer.addEventListener('updateend', resolve, { once: true });
      this.buffer.addEventListener('error', () => reject(new Error('the browser refused a segment')), { once: true });
      this.buffer.appendBuffer(bytes);
    });
  }

  async fetchText(url) {
    return new TextDecoder().decode(await this.fetchBytes(url));
  }

  async fetchBytes(url) {
    const response = await fetch(url, { cache: 'no-store' });
    if (response.status === 401) throw new Error('the relay refused this link (401): ask for a new viewer link');
    if (!response.ok) throw new Error(`${url.split('?')[0]} answered ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
}
