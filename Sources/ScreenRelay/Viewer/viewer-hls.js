// screenpub viewer, HLS mode (/view/SESSION?token=…&hls=1): plays the relay's HLS of the session through
// Media Source Extensions and shows each frame's ID3 metadata and the session's date ranges (pauses,
// recordings, markers) in sync with the picture. docs/protocol.md, "HLS", describes what it reads. With an
// LL-HLS server (the relay) it follows parts: it starts at the newest part a keyframe starts, asks for the
// playlist with a blocking reload for the part after the last it has, and plays close behind the newest frame.
import { page, setStatus, showProblem, showRendition } from './view.js';
import { renditionText } from './wire.js';
import { blockingURL, nextFetches, parseMediaPlaylist, parseMultivariantPlaylist, segmentCues, startingPoint } from './hls-playlist.js';

/// How far behind the newest frame it holds the player plays: room for the next part to come (a part is about
/// half a second; it comes when its last frame's successor does).
const LIVE_MARGIN_SECONDS = 0.6;
/// Further behind than this (it started playing from the part it joined at, a stall, a tab in the background),
/// it jumps back to the live edge: past the margin and a part's worth of jitter.
const BEHIND_SECONDS = 1.6;

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
    /// The next part or segment to fetch (`{ sequence, part }`); null until the first playlist.
    this.cursor = null;
    this.queue = Promise.resolve();
  }

  async start() {
    page.canvas.hidden = true;
    this.video.hidden = false;
    this.state.mode = 'hls';
    this.state.dateRanges = [];
    setStatus(this.state, 'Loading the HLS stream…');
    const variants = parseMultivariantPlaylist(await this.fetchText(this.base + 'index.m3u8' + this.query));
    const typeOf = (variant) => `video/mp4; codecs="${variant.codecs || 'vp09.00.10.08'}"`;
    const canPlay = (variant) => 'MediaSource' in window && MediaSource.isTypeSupported(typeOf(variant));
    // The stream as published where this browser plays it (AV1 or VP9); the H.264 variant, listed first for
    // players that do not read CODECS, is for a browser that plays nothing else.
    const variant = variants.filter(canPlay).sort((a, b) => a.codecs.startsWith('avc1') - b.codecs.startsWith('avc1'))[0];
    if (!variant) {
      const types = variants.map(typeOf).join(' or ') || 'the stream';
      showProblem(this.state, `This browser cannot play ${types} through Media Source Extensions; open the viewer without &hls=1.`);
      return;
    }
    const codecs = variant.codecs || 'vp09.00.10.08';
    const type = typeOf(variant);
    this.mediaURL = new URL(variant.uri, location.origin + this.base).href;
    showRendition(this.state, `${renditionText(codecs)} over HLS`);
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
    let blocking = false;
    for (;;) {
      try {
        blocking = await this.poll(blocking);
      } catch (error) {
        blocking = false;
        setStatus(this.state, `HLS: ${error.message}; trying again`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      // A server that holds the request until the next part needs no pause; another one is asked twice a segment.
      if (!blocking) await new Promise((resolve) => setTimeout(resolve, Math.max(250, (this.targetDuration || 2) * 500)));
    }
  }

  /// Reads the playlist (held until the next part with a blocking reload) and appends what is new; whether the
  /// server holds requests.
  async poll(blocking) {
    const url = blocking && this.cursor ? blockingURL(this.mediaURL, this.cursor) : this.mediaURL;
    const playlist = parseMediaPlaylist(await this.fetchText(url));
    this.targetDuration = playlist.targetDuration;
    for (const segment of playlist.segments) for (const range of segment.dateRanges) this.noteDateRange(range);
    if (!this.cursor) this.cursor = startingPoint(playlist);
    const { fetches, cursor } = nextFetches(playlist, this.cursor);
    for (const fetched of fetches) {
      if (fetched.map && fetched.map !== this.appendedMap) {
        await this.append(await this.fetchBytes(new URL(fetched.map, this.mediaURL).href));
        this.appendedMap = fetched.map;
      }
      const bytes = await this.fetchBytes(new URL(fetched.uri, this.mediaURL).href);
      this.cues.push(...segmentCues(bytes));
      if (this.cues.length > 2000) this.cues.splice(0, this.cues.length - 2000);
      await this.append(bytes);
      this.state.segments = (this.state.segments || 0) + 1;
    }
    this.cursor = cursor;
    if (fetches.length) this.keepLive(playlist.partTarget !== null);
    return playlist.canBlockReload && playlist.partTarget !== null;
  }

  /// Plays from the buffer's start at first; with parts, close behind the newest frame, jumping there when it
  /// falls further behind.
  keepLive(withParts) {
    const ranges = this.video.buffered;
    if (!ranges.length) return;
    // The newest frame's end as its metadata says: the buffered end lies beyond it where the browser takes frames
    // to last longer than they did (WebKitGTK's H.264, whose parser times frames by the SPS), and playing on
    // past it would leave the next frames behind the playhead.
    const newest = this.cues[this.cues.length - 1];
    const end = Math.min(ranges.end(ranges.length - 1), newest ? newest.time + newest.duration : Infinity);
    const behind = end - this.video.currentTime;
    if (withParts && (this.video.paused || behind > BEHIND_SECONDS)) {
      this.video.currentTime = Math.max(ranges.start(ranges.length - 1), end - LIVE_MARGIN_SECONDS);
    } else if (this.video.paused && this.video.currentTime < ranges.start(0)) {
      this.video.currentTime = ranges.start(0);
    }
    if (this.video.paused) this.video.play().catch(() => {});
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
