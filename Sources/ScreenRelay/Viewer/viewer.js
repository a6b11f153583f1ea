// screenpub viewer: joins a session on the relay with the subscriber token from the page's URL, subscribes
// to a screen stream and decodes it with WebCodecs into a canvas, and its sound (Opus) with AudioDecoder into an
// AudioWorklet, lined up with the pictures by capture time. The wire format is docs/protocol.md; it is
// read by wire.js, and what the page shows is in view.js.

import {
  CODEC_AV1, CODEC_NAME, HEADER_SIZE, WEBCODECS_CODEC, decoderCodecString, describeMetadata, displayName, median,
  parseMediaFrame, unsupportedCodecText,
} from './wire.js';
import { reduce } from './session.js';
import { page, setStatus, showProblem, viewer } from './view.js';
import { HLSPlayer } from './viewer-hls.js';

// Sound is played this long after capture at least (its jitter buffer), more when the pictures take longer.
const AUDIO_TARGET_DELAY_MS = 60;
const AUDIO_MAX_DELAY_MS = 1000;
const BT601 = { primaries: 'smpte170m', transfer: 'smpte170m', matrix: 'smpte170m', fullRange: false };
// More chunks than this waiting in the decoder means the viewer cannot keep up: skip to the next keyframe.
const MAX_DECODE_QUEUE = 8;
const RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 4000, 8000];

const MAX_SIGNAL_DATA = 8192;
const MAX_CHAT_LINES = 200;


/// Decodes one stream into the canvas. A new player is made for every subscription, so a publisher that
/// reconnects (a new stream) starts from a clean decoder and its first keyframe.
class StreamPlayer {
  constructor(stream, requestKeyframe) {
    this.stream = stream;
    this.requestKeyframe = requestKeyframe;
    this.decoder = null;
    this.codec = null;
    this.codecString = null;
    this.waitingForKeyframe = true;
    this.unsupported = false; // no decoder for the stream here: told once, nothing more is decoded
    this.pending = new Map(); // chunk timestamp → the frame's header fields
    this.context = page.canvas.getContext('2d', { alpha: false });
    this.latencies = [];
    this.arrivals = []; // [time ms, bytes] over the last two seconds
    this.shownSequence = null; // the frame number of the picture on screen
  }

  feed(frame) {
    const now = performance.now();
    this.arrivals.push([now, frame.payload.byteLength + frame.metadata.byteLength + HEADER_SIZE]);
    while (this.arrivals.length && this.arrivals[0][0] < now - 2000) this.arrivals.shift();
    // (A catch-up burst fills the queue on purpose: its pictures are decoded, not shown.)
    if (this.decoder && this.decoder.decodeQueueSize > MAX_DECODE_QUEUE && !frame.keyframe && !frame.catchUp) {
      this.skip('the decoder is behind');
      return;
    }
    if (this.unsupported) return;
    if (this.waitingForKeyframe && !frame.keyframe) {
      viewer.framesSkipped += 1;
      return;
    }
    // An AV1 keyframe names its profile and level: a new one (a new picture size) means a new configuration.
    const codecString = decoderCodecString(this.stream.properties, frame.codec);
    if (!this.decoder || this.decoder.state === 'closed' || this.codec !== frame.codec || this.codecString !== codecString) {
      this.openDecoder(frame.codec, codecString);
    }
    this.waitingForKeyframe = false;
    this.pending.set(frame.sequence, frame);
    try {
      this.decoder.decode(new EncodedVideoChunk({
        type: frame.keyframe ? 'key' : 'delta',
        timestamp: frame.sequence,
        data: frame.payload,
      }));
    } catch (error) {
      this.fail(error);
    }
  }

  openDecoder(codec, codecString) {
    this.closeDecoder();
    this.codec = codec;
    this.codecString = codecString;
    viewer.codecString = codecString;
    this.decoder = new VideoDecoder({
      output: (picture) => this.show(picture),
      error: (error) => this.fail(error),
    });
    // screenpub converts with libyuv's BT.601 studio-range matrix; VP8 cannot say so in its bitstream.
    this.decoder.configure({ codec: codecString, optimizeForLatency: true, colorSpace: BT601 });
  }

  show(picture) {
    const frame = this.pending.get(picture.timestamp);
    for (const key of this.pending.keys()) { if (key <= picture.timestamp) this.pending.delete(key); }
    // Never the past as live: catch-up pictures only bring the decoder to the newest, and a picture older than
    // the one on screen is not drawn over it.
    // (Judged by the stream's frame numbers, not the publisher's wall clock, which may be stepped back.)
    if (frame && (frame.catchUp || (this.shownSequence !== null && frame.sequence < this.shownSequence))) {
      if (frame.catchUp) viewer.catchUpFrames += 1; else viewer.staleFrames += 1;
      picture.close();
      return;
    }
    const width = picture.displayWidth, height = picture.displayHeight;
    if (page.canvas.width !== width || page.canvas.height !== height) {
      page.canvas.width = width;
      page.canvas.height = height;
    }
    this.context.drawImage(picture, 0, 0);
    picture.close();
    viewer.framesDecoded += 1;
    viewer.width = width;
    viewer.height = height;
    page.frames.textContent = String(viewer.framesDecoded);
    page.size.textContent = `${width}×${height} ${CODEC_NAME[this.codec]} ${this.stream.properties.videoType}`;
    if (frame) {
      this.shownSequence = frame.sequence;
      viewer.shownCaptureMs = frame.wallClockMs;
      viewer.lastMetadata = describeMetadata(frame.metadata);
      page.metadata.textContent = viewer.lastMetadata;
      // Wall clocks of publisher and viewer: exact on one machine, otherwise as good as their clock sync.
      viewer.lastLatencyMs = Date.now() - frame.wallClockMs;
      this.latencies.push(viewer.lastLatencyMs);
      if (this.latencies.length > 50) this.latencies.shift();
      page.latency.textContent = `${viewer.lastLatencyMs} ms (median ${median(this.latencies)} ms)`;
    }
    const span = this.arrivals.length > 1 ? (this.arrivals[this.arrivals.length - 1][0] - this.arrivals[0][0]) / 1000 : 0;
    if (span > 0) {
      const bytes = this.arrivals.reduce((sum, [, size]) => sum + size, 0);
      page.rate.textContent = `${((this.arrivals.length - 1) / span).toFixed(1)} fps, ${(bytes * 8 / span / 1000).toFixed(0)} kbit/s`;
    }
  }

  /// Drops frames up to the next keyframe and asks the publisher (through the relay) for one.
  skip(reason) {
    viewer.framesSkipped += 1;
    if (!this.waitingForKeyframe) {
      this.waitingForKeyframe = true;
      console.info(`screenpub viewer: waiting for a keyframe: ${reason}`);
      this.requestKeyframe();
    }
  }

  fail(error) {
    viewer.decoderErrors += 1;
    if (error && error.name === 'NotSupportedError') {
      // No decoder for this profile here (a 4:4:4 stream in a browser without one): say so, ask for no keyframes.
      this.unsupported = true;
      this.closeDecoder();
      showProblem(unsupportedCodecText(this.codecString));
      return;
    }
    console.warn('screenpub viewer: decoder error', error);
    this.closeDecoder();
    this.skip(`decoder error: ${error.message || error}`);
  }

  closeDecoder() {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = null;
    this.pending.clear();
  }
}

/// Plays one stream's sound: Opus through WebCodecs' AudioDecoder, into an AudioWorklet that plays each chunk
/// at its capture time plus a playout delay: at least AUDIO_TARGET_DELAY_MS (the jitter buffer), and as long as
/// the pictures take from capture to screen, so that sound and pictures line up. The delay follows the
/// measured latencies (wall clocks of publisher and viewer, as the picture's latency does).
class AudioPlayer {
  constructor(latencies) {
    this.videoLatencies = latencies; // the picture's capture → display latencies (ms), shared with its player
    this.decoder = null;
    this.channels = 0;
    this.arrivalLatencies = [];
    this.pending = []; // frames being decoded, in order (the decoder's outputs come in the same order)
    this.context = null;
    this.node = null;
    this.gain = null;
  }

  feed(frame) {
    viewer.audioFramesReceived += 1;
    this.arrivalLatencies.push(Date.now() - frame.wallClockMs);
    if (this.arrivalLatencies.length > 100) this.arrivalLatencies.shift();
    if (typeof AudioDecoder === 'undefined') return;
    if (!this.decoder || this.decoder.state === 'closed' || this.channels !== frame.channels) this.openDecoder(frame.channels);
    this.pending.push(frame);
    if (this.pending.length > 50) this.pending.shift();
    try {
      this.decoder.decode(new EncodedAudioChunk({ type: 'key', timestamp: frame.captureUs, data: frame.payload }));
    } catch (error) {
      this.fail(error);
    }
  }

  openDecoder(channels) {
    this.close();
    this.channels = channels;
    this.decoder = new AudioDecoder({ output: (data) => this.play(data), error: (error) => this.fail(error) });
    this.decoder.configure({ codec: 'opus', sampleRate: 48000, numberOfChannels: channels });
  }

  /// The playout delay: the jitter buffer, or longer when the pictures arrive later than the sound.
  delayMs() {
    const arrival = this.arrivalLatencies.length ? [...this.arrivalLatencies].sort((a, b) => a - b)[Math.floor(this.arrivalLatencies.length * 0.95)] : 0;
    const pictures = median(this.videoLatencies);
    const delay = Math.max(AUDIO_TARGET_DELAY_MS, arrival + 20, Number.isNaN(pictures) ? 0 : pictures);
    return Math.min(delay, AUDIO_MAX_DELAY_MS);
  }

  play(data) {
    viewer.audioFramesDecoded += 1;
    while (this.pending.length && this.pending[0].captureUs < data.timestamp) this.pending.shift();
    const frame = this.pending.shift();
    if (!this.node || !frame) { data.close(); return; }
    const channels = [];
    for (let channel = 0; channel < data.numberOfChannels; channel += 1) {
      const samples = new Float32Array(data.numberOfFrames);
      data.copyTo(samples, { planeIndex: channel, format: 'f32-planar' });
      channels.push(samples);
    }
    data.close();
    viewer.audioDelayMs = Math.round(this.delayMs());
    const start = this.context.currentTime + (frame.wallClockMs + viewer.audioDelayMs - Date.now()) / 1000;
    this.node.port.postMessage({ start, channels }, channels.map((samples) => samples.buffer));
  }

  /// Starts the output (after a click: browsers allow sound only then); nothing plays before.
  async enable() {
    if (!this.context) {
      this.context = new AudioContext({ sampleRate: 48000, latencyHint: 'interactive' });
      await this.context.audioWorklet.addModule('/viewer/viewer-audio-worklet.js');
      this.node = new AudioWorkletNode(this.context, 'screenpub-sound', { outputChannelCount: [2] });
      this.node.port.onmessage = (event) => { viewer.audioWorklet = event.data; };
      this.gain = new GainNode(this.context);
      this.node.connect(this.gain).connect(this.context.destination);
    }
    await this.context.resume();
    this.gain.gain.value = 1;
    viewer.audioPlaying = true;
  }

  disable() {
    if (this.gain) this.gain.gain.value = 0;
    viewer.audioPlaying = false;
  }

  fail(error) {
    viewer.audioDecoderErrors += 1;
    console.warn('screenpub viewer: audio decoder error', error);
    this.close();
  }

  close() {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = null;
    this.pending = [];
  }
}

class Viewer {
  constructor(token) {
    this.token = token;
    this.socket = null;
    this.player = null;
    this.audio = null;
    this.attempt = 0;
    this.fatal = false;
  }

  connect() {
    const url = new URL('/ws', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    socket.onopen = () => this.send({ type: 'hello', token: this.token, client: 'screenpub-viewer/1' });
    socket.onmessage = (event) => {
      if (typeof event.data === 'string') this.control(event.data);
      else this.media(event.data);
    };
    socket.onclose = (event) => this.closed(event);
  }

  /// Shows whether the watched stream is paused (`hasVideo` false: no frames until it resumes).
  showPaused() {
    const stream = viewer.streams.get(viewer.currentStreamId);
    viewer.paused = Boolean(stream && stream.properties && stream.properties.hasVideo === false);
    page.pausedBadge.hidden = !viewer.paused;
    // Sound: the speaker button only for a stream that has sound; a badge while the presenter muted it.
    const hasSound = Boolean(stream && stream.properties && stream.properties.audio);
    viewer.audioMuted = hasSound && stream.properties.hasAudio === false && !viewer.paused;
    page.mutedBadge.hidden = !viewer.audioMuted;
    page.sound.hidden = !hasSound;
  }

  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ v: 1, ...message }));
  }

  /// A control message: the session reducer updates the state, and its effects are carried out on the page.
  control(text) {
    let message;
    try { message = JSON.parse(text); } catch { console.warn('screenpub viewer: bad control message', text); return; }
    if (message.type === 'error') console.warn(`screenpub viewer: relay error ${message.code}: ${message.message}`);
    for (const effect of reduce(viewer, message)) this.perform(effect);
  }

  perform(effect) {
    switch (effect.type) {
      case 'welcomed':
        this.attempt = 0;
        this.player = null;
        page.chatInput.disabled = false;
        break;
      case 'status': setStatus(effect.text); break;
      case 'notice': this.showNotice(effect.text); break;
      case 'chat': this.showChat(effect.message); break;
      case 'fatal':
        this.fatal = true;
        showProblem(effect.text);
        break;
      case 'loadSession': this.loadSession(effect.sessionId); break;
      case 'moderator': page.moderator.hidden = !effect.shown; break;
      case 'loadArchives': this.loadArchives(); break;
      case 'pickStream': this.pickStream(); break;
      case 'streamEnded':
        this.player?.closeDecoder();
        this.player = null;
        break;
      case 'showPaused': this.showPaused(); break;
      case 'reception':
        page.slowBadge.hidden = effect.text === null;
        if (effect.text !== null) page.slowBadge.textContent = effect.text;
        break;
      case 'recording':
        page.recordingBadge.hidden = viewer.recording === null;
        if (viewer.recording !== null) {
          page.recordingBadge.title = effect.name ? `recording "${effect.name}"` : 'this session is being recorded';
        }
        this.renderRecordButton();
        break;
      case 'renderViewers': this.renderViewers(); break;
      case 'renderStreams': this.renderStreams(); break;
      default: break;
    }
  }

  sendChat(text) {
    if (!text.trim()) return;
    if (new TextEncoder().encode(text).length > MAX_SIGNAL_DATA) {
      this.showNotice(`Not sent: a message may hold at most ${MAX_SIGNAL_DATA} bytes.`);
      return;
    }
    // The relay echoes it to everyone, us included, so it appears once, in the session's order.
    this.send({ type: 'signal', signalType: 'chat', data: text });
  }

  renderViewers() {
    viewer.viewerCount = [...viewer.connections.values()].filter((connection) => connection.role !== 'publisher').length;
    page.viewers.hidden = viewer.connections.size === 0;
    page.viewers.textContent = `👁 ${viewer.viewerCount} watching`;
  }

  /// The session's title (GET /session/ID with this page's token), as the page's heading and title.
  async loadSession(sessionId) {
    try {
      const response = await fetch(`/session/${encodeURIComponent(sessionId)}?token=${encodeURIComponent(this.token)}`);
      if (!response.ok) return;
      const session = await response.json();
      viewer.title = session.title || '';
      page.title.textContent = viewer.title || 'screenpub';
      document.title = viewer.title ? `${viewer.title} — screenpub` : 'screenpub viewer';
    } catch (error) {
      console.warn('screenpub viewer: no session details', error);
    }
  }

  /// Moderators: the archive API with this page's (moderator) token.
  async archiveCall(method, path, body) {
    const response = await fetch(path, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) {
      let said = '';
      try { said = (await response.json()).error.message; } catch { said = `HTTP ${response.status}`; }
      throw new Error(said);
    }
    return response.json();
  }

  async loadArchives() {
    try {
      viewer.archives = (await this.archiveCall('GET', '/archive')).items;
    } catch (error) {
      viewer.archives = [];
      page.archives.replaceChildren(Object.assign(document.createElement('li'), { className: 'empty', textContent: error.message }));
      return;
    }
    const recording = viewer.archives.find((archive) => archive.status === 'started');
    if (recording) viewer.recording = recording.id;
    this.renderRecordButton();
    page.archives.replaceChildren();
    if (viewer.archives.length === 0) {
      page.archives.append(Object.assign(document.createElement('li'), { className: 'empty', textContent: 'no recordings yet' }));
    }
    for (const archive of viewer.archives) {
      const item = document.createElement('li');
      const link = document.createElement('a');
      link.href = `/archive/${encodeURIComponent(archive.id)}/view?token=${encodeURIComponent(this.token)}`;
      link.target = '_blank';
      link.rel = 'noopener';
      link.textContent = archive.name || new Date(archive.createdAt).toLocaleString();
      const size = archive.size >= 1e6 ? `${(archive.size / 1e6).toFixed(1)} MB` : `${Math.round(archive.size / 1e3)} kB`;
      item.append(link, document.createTextNode(` · ${archive.status === 'started' ? 'recording, ' : ''}${Math.round(archive.duration)} s, ${size}`));
      page.archives.append(item);
    }
    // While a recording grows, its length and size are shown as they grow.
    clearTimeout(this.archiveRefresh);
    if (recording) this.archiveRefresh = setTimeout(() => this.loadArchives(), 5000);
  }

  renderRecordButton() {
    page.record.textContent = viewer.recording ? '■ Stop recording' : '● Start recording';
    page.record.setAttribute('aria-pressed', String(Boolean(viewer.recording)));
  }

  async toggleRecording() {
    page.record.disabled = true;
    try {
      if (viewer.recording) await this.archiveCall('POST', `/archive/${encodeURIComponent(viewer.recording)}/stop`);
      else await this.archiveCall('POST', '/archive', { sessionId: viewer.sessionId });
    } catch (error) {
      this.showNotice(`Recording: ${error.message}`);
    } finally {
      page.record.disabled = false;
    }
    await this.loadArchives();
  }

  showChat(signal) {
    const from = signal.from === undefined || signal.from === null ? null : viewer.connections.get(signal.from);
    const sender = signal.from === undefined || signal.from === null ? 'server' : (from ? from.name : displayName(null, signal.fromData));
    const mine = signal.from === viewer.connectionId;
    viewer.chat.push({ from: signal.from ?? null, sender, text: signal.data });
    const item = document.createElement('li');
    if (mine) item.className = 'mine';
    const who = document.createElement('span');
    who.className = 'sender';
    who.textContent = mine ? 'you' : sender;
    item.append(who, document.createTextNode(signal.data)); // text, never HTML
    this.appendChatLine(item);
  }

  showNotice(text) {
    const item = document.createElement('li');
    item.className = 'notice';
    item.textContent = text;
    this.appendChatLine(item);
  }

  appendChatLine(item) {
    page.chat.append(item);
    while (page.chat.children.length > MAX_CHAT_LINES) page.chat.firstElementChild.remove();
    page.chat.scrollTop = page.chat.scrollHeight;
  }

  media(buffer) {
    let frame;
    try { frame = parseMediaFrame(buffer); } catch (error) { console.warn('screenpub viewer:', error.message); return; }
    if (!frame || frame.streamId !== viewer.currentStreamId || !this.player) return;
    if (frame.kind === 'audio') this.audio?.feed(frame);
    else this.player.feed(frame);
  }

  /// The speaker button: sound on (a click lets the page play it) or off.
  async toggleSound() {
    if (!this.audio) return;
    try {
      if (viewer.audioPlaying) this.audio.disable(); else await this.audio.enable();
    } catch (error) {
      this.showNotice(`Sound cannot play here: ${error.message || error}`);
    }
    this.renderSoundButton();
  }

  renderSoundButton() {
    page.sound.textContent = viewer.audioPlaying ? '🔊 Sound on' : '🔇 Sound off — click to listen';
    page.sound.setAttribute('aria-pressed', String(viewer.audioPlaying));
  }

  /// Subscribes to the first live stream when none is being watched.
  pickStream(streamId) {
    if (streamId === undefined) {
      if (viewer.currentStreamId !== null) return;
      const live = [...viewer.streams.values()].filter((stream) => !stream.ended);
      const choice = live.find((stream) => stream.properties.videoType === 'screen') || live[0];
      if (!choice) return;
      streamId = choice.streamId;
    }
    if (viewer.currentStreamId === streamId) return;
    if (viewer.currentStreamId !== null) this.send({ type: 'unsubscribe', streamId: viewer.currentStreamId });
    this.player?.closeDecoder();
    const stream = viewer.streams.get(streamId);
    viewer.currentStreamId = streamId;
    viewer.shownCaptureMs = null;
    this.player = new StreamPlayer(stream, () => this.send({ type: 'requestKeyframe', streamId }));
    // The sound player outlives subscriptions (its AudioContext was allowed by a click); its decoder does not.
    this.audio?.close();
    this.audio = this.audio || new AudioPlayer(this.player.latencies);
    this.audio.videoLatencies = this.player.latencies;
    // `layers`: the relay may leave out higher temporal layers when this link is slow, and says so.
    page.slowBadge.hidden = true;
    this.send({ type: 'subscribe', streamId, audio: typeof AudioDecoder !== 'undefined', layers: true, catchUp: true });
    this.renderStreams();
  }

  renderStreams() {
    const list = page.streams;
    list.replaceChildren();
    if (viewer.streams.size === 0) {
      const empty = document.createElement('li');
      empty.className = 'empty';
      empty.textContent = 'none yet';
      list.append(empty);
      return;
    }
    for (const stream of viewer.streams.values()) {
      const item = document.createElement('li');
      const p = stream.properties;
      item.textContent = `${stream.name || 'stream'} · ${p.videoType} ${p.width}×${p.height} ${p.codec.toUpperCase()} ${p.estimatedFramesPerSecond} fps`;
      item.title = `stream ${stream.streamId} from ${stream.connectionId}`;
      if (stream.ended) item.className = 'ended';
      else {
        if (stream.streamId === viewer.currentStreamId) item.className = 'current';
        item.onclick = () => this.pickStream(stream.streamId);
      }
      list.append(item);
    }
  }

  closed(event) {
    page.chatInput.disabled = true;
    this.player?.closeDecoder();
    this.audio?.close();
    this.player = null;
    viewer.currentStreamId = null;
    if (this.fatal) return;
    // 1008: the relay refused the token; retrying would be refused again.
    if (event.code === 1008) {
      showProblem(`The relay refused this viewer: ${event.reason || 'policy violation'}. Ask for a new viewer link.`);
      return;
    }
    const delay = RECONNECT_DELAYS_MS[Math.min(this.attempt, RECONNECT_DELAYS_MS.length - 1)];
    this.attempt += 1;
    setStatus(`Disconnected from the relay; reconnecting in ${(delay / 1000).toFixed(1)} s…`);
    setTimeout(() => this.connect(), delay * (0.8 + 0.4 * Math.random()));
  }
}

async function start() {
  const parameters = new URLSearchParams(location.search);
  if (parameters.get('hls') === '1') {
    // HLS mode: the picture through Media Source Extensions, its timed metadata from the segments; no chat.
    const token = parameters.get('token');
    const session = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '');
    if (!token) {
      showProblem('This link has no token. Open the viewer URL that screenpub or the relay printed (…/view/SESSION?token=…&hls=1).');
      return;
    }
    new HLSPlayer(session, token).start().catch((error) => showProblem(`HLS: ${error.message}`));
    return;
  }
  if (typeof VideoDecoder === 'undefined') {
    showProblem(window.isSecureContext
      ? 'This browser cannot decode video here: it lacks WebCodecs (VideoDecoder). Use a current Chromium, Chrome, Edge, Firefox (130 or later) or Safari (16.4 or later).'
      : 'WebCodecs is only available on secure pages. Open this viewer over https, or on localhost / 127.0.0.1 (for example through an SSH tunnel: ssh -L PORT:127.0.0.1:PORT host).');
    return;
  }
  for (const codec of [2, CODEC_AV1]) {
    const support = await VideoDecoder.isConfigSupported({ codec: WEBCODECS_CODEC[codec] }).catch(() => ({ supported: false }));
    if (!support.supported) console.warn(`screenpub viewer: this browser reports no ${CODEC_NAME[codec]} decoder; streams in it will not play`);
  }
  const token = new URLSearchParams(location.search).get('token');
  if (!token) {
    showProblem('This link has no token. Open the viewer URL that screenpub or the relay printed (…/view/SESSION?token=…).');
    return;
  }
  const session = new Viewer(token);
  page.chatForm.addEventListener('submit', (event) => {
    event.preventDefault();
    session.sendChat(page.chatInput.value);
    page.chatInput.value = '';
  });
  window.screenViewerSendChat = (text) => session.sendChat(text);
  page.sound.addEventListener('click', () => session.toggleSound());
  page.record.addEventListener('click', () => session.toggleRecording());
  page.fullscreen.addEventListener('click', () => {
    if (document.fullscreenElement) document.exitFullscreen();
    else page.stage.requestFullscreen().catch((error) => session.showNotice(`Fullscreen is not allowed here: ${error.message}`));
  });
  session.renderSoundButton();
  session.connect();
}

start();
