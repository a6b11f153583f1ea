// screenpub viewer: joins a session on the relay with the subscriber token from the page's URL, subscribes to a
// screen stream and shows it (video-player.js) with its sound (audio-player.js). This file puts the parts
// together: the connection (connection.js), the session reducer's effects (session.js) carried out on the page,
// the chat (chat-view.js), the stream list (stream-list.js) and, for moderators, the recordings
// (archive-panel.js). The wire format is docs/protocol.md, read by wire.js.

import { CODEC_AV1, CODEC_H264, CODEC_NAME, CODEC_VP9, H264_RENDITION_PREFIX, WEBCODECS_CODEC, decoderCodecString, parseMediaFrame } from './wire.js';
import { reduce } from './session.js';
import { createViewerState, page, setStatus, showProblem } from './view.js';
import { HLSPlayer } from './viewer-hls.js';
import { VideoPlayer } from './video-player.js';
import { AudioPlayer } from './audio-player.js';
import { RelayConnection } from './connection.js';
import { ChatView, chatRefusal } from './chat-view.js';
import { chooseStream, renderStreams } from './stream-list.js';
import { ArchivePanel } from './archive-panel.js';

/// One page's live view of a session.
class Viewer {
  constructor(token, state) {
    this.token = token;
    this.state = state;
    this.player = null;
    this.audio = null;
    this.chat = new ChatView(state);
    this.archives = new ArchivePanel(token, state, (text) => this.chat.showNotice(text));
    this.connection = new RelayConnection(token, {
      onControl: (message) => this.control(message),
      onMedia: (buffer) => this.media(buffer),
      onClosed: () => this.disconnected(),
      onRetry: (delayMs) => setStatus(this.state, `Disconnected from the relay; reconnecting in ${(delayMs / 1000).toFixed(1)} s…`),
      onStopped: (text) => { if (text) showProblem(this.state, text); },
    });
  }

  connect() { this.connection.connect(); }

  /// A control message: the session reducer updates the state, and its effects are carried out on the page.
  control(message) {
    if (message.type === 'error') console.warn(`screenpub viewer: relay error ${message.code}: ${message.message}`);
    for (const effect of reduce(this.state, message)) this.perform(effect);
  }

  perform(effect) {
    switch (effect.type) {
      case 'welcomed':
        this.connection.welcomed();
        this.player = null;
        page.chatInput.disabled = false;
        break;
      case 'status': setStatus(this.state, effect.text); break;
      case 'notice': this.chat.showNotice(effect.text); break;
      case 'chat': this.chat.showChat(effect.message); break;
      case 'fatal':
        this.connection.refused();
        showProblem(this.state, effect.text);
        break;
      case 'loadSession': this.loadSession(effect.sessionId); break;
      case 'moderator': page.moderator.hidden = !effect.shown; break;
      case 'loadArchives': this.archives.load(); break;
      case 'pickStream': this.pickStream(); break;
      case 'streamEnded':
        this.player?.closeDecoder();
        this.player = null;
        break;
      case 'showPaused': this.showPaused(); break;
      case 'rendition':
        if (effect.stream) this.player?.useRendition(effect.stream);
        break;
      case 'reception':
        page.slowBadge.hidden = effect.text === null;
        if (effect.text !== null) page.slowBadge.textContent = effect.text;
        break;
      case 'recording':
        page.recordingBadge.hidden = this.state.recording === null;
        if (this.state.recording !== null) {
          page.recordingBadge.title = effect.name ? `recording "${effect.name}"` : 'this session is being recorded';
        }
        this.archives.renderButton();
        break;
      case 'renderViewers': this.renderViewers(); break;
      case 'renderStreams': renderStreams(this.state.streams, this.state.currentStreamId, (streamId) => this.pickStream(streamId)); break;
      default: break;
    }
  }

  /// Shows whether the watched stream is paused (`hasVideo` false: no frames until it resumes), and its sound.
  showPaused() {
    const stream = this.state.streams.get(this.state.currentStreamId);
    this.state.paused = Boolean(stream && stream.properties && stream.properties.hasVideo === false);
    page.pausedBadge.hidden = !this.state.paused;
    // Sound: the speaker button only for a stream that has sound; a badge while the presenter muted it.
    const hasSound = Boolean(stream && stream.properties && stream.properties.audio);
    this.state.audioMuted = hasSound && stream.properties.hasAudio === false && !this.state.paused;
    page.mutedBadge.hidden = !this.state.audioMuted;
    page.sound.hidden = !hasSound;
  }

  sendChat(text) {
    const refusal = chatRefusal(text);
    if (refusal !== null) {
      if (refusal) this.chat.showNotice(refusal);
      return;
    }
    // The relay echoes it to everyone, us included, so it appears once, in the session's order.
    this.connection.send({ type: 'signal', signalType: 'chat', data: text });
  }

  renderViewers() {
    this.state.viewerCount = [...this.state.connections.values()].filter((connection) => connection.role !== 'publisher').length;
    page.viewers.hidden = this.state.connections.size === 0;
    page.viewerCount.textContent = `${this.state.viewerCount} watching`;
  }

  /// The session's title (GET /session/ID with this page's token), as the page's heading and title.
  async loadSession(sessionId) {
    try {
      const response = await fetch(`/session/${encodeURIComponent(sessionId)}?token=${encodeURIComponent(this.token)}`);
      if (!response.ok) return;
      const session = await response.json();
      this.state.title = session.title || '';
      page.title.textContent = this.state.title || 'screenpub';
      document.title = this.state.title ? `${this.state.title} — screenpub` : 'screenpub viewer';
    } catch (error) {
      console.warn('screenpub viewer: no session details', error);
    }
  }

  media(buffer) {
    let frame;
    try { frame = parseMediaFrame(buffer); } catch (error) { console.warn('screenpub viewer:', error.message); return; }
    // A rendition's pictures come under its own stream id (`renditionChanged`); sound under the stream's.
    const watched = frame && (frame.streamId === this.state.currentStreamId || (frame.kind !== 'audio' && frame.streamId === this.state.renditionStreamId));
    if (!watched || !this.player) return;
    if (frame.kind === 'audio') this.audio?.feed(frame);
    else this.player.feed(frame);
  }

  /// The speaker button: sound on (a click lets the page play it) or off.
  async toggleSound() {
    if (!this.audio) return;
    try {
      if (this.state.audioPlaying) this.audio.disable(); else await this.audio.enable();
    } catch (error) {
      this.chat.showNotice(`Sound cannot play here: ${error.message || error}`);
    }
    this.renderSoundButton();
  }

  renderSoundButton() {
    page.soundLabel.textContent = this.state.audioPlaying ? 'Sound on' : 'Sound off — click to listen';
    page.soundOn.hidden = !this.state.audioPlaying;
    page.soundOff.hidden = this.state.audioPlaying;
    page.sound.setAttribute('aria-pressed', String(this.state.audioPlaying));
  }

  /// Subscribes to `streamId`, or (none given) to the first live stream when none is being watched.
  async pickStream(streamId) {
    if (streamId === undefined) {
      if (this.state.currentStreamId !== null) return;
      streamId = chooseStream(this.state.streams);
      if (streamId === null) return;
    }
    if (this.state.currentStreamId === streamId) return;
    if (this.state.currentStreamId !== null) this.connection.send({ type: 'unsubscribe', streamId: this.state.currentStreamId });
    this.player?.closeDecoder();
    this.state.currentStreamId = streamId;
    this.state.renditionStreamId = null;
    this.state.shownCaptureMs = null;
    this.player = new VideoPlayer(this.state.streams.get(streamId), this.state, () => this.connection.send({ type: 'requestKeyframe', streamId }));
    // The sound player outlives subscriptions (its AudioContext was allowed by a click); its decoder does not.
    this.audio?.close();
    this.audio = this.audio || new AudioPlayer(this.state, this.player.latencies);
    this.audio.videoLatencies = this.player.latencies;
    // `layers`: the relay may leave out higher temporal layers when this link is slow, and says so.
    page.slowBadge.hidden = true;
    // `decodes`: what this browser decodes of the stream as published and of screenpub's H.264 rendition, so that
    // the relay sends it one it can show (protocol 7).
    const decodes = await decodableCodecs(this.state.streams.get(streamId));
    if (this.state.currentStreamId !== streamId) return; // another stream was picked meanwhile
    this.state.decodes = decodes;
    this.connection.send({ type: 'subscribe', streamId, audio: typeof AudioDecoder !== 'undefined', layers: true, catchUp: true, decodes });
    renderStreams(this.state.streams, this.state.currentStreamId, (id) => this.pickStream(id));
  }

  /// The socket is gone: the decoders close; the connection decides whether to try again.
  disconnected() {
    page.chatInput.disabled = true;
    this.player?.closeDecoder();
    this.audio?.close();
    this.player = null;
    this.state.currentStreamId = null;
  }
}

/// The codec strings this browser decodes among the stream's own and screenpub's H.264 rendition's, as the relay
/// matches them (`decodes`): the stream's full string, and `avc1.42` for Constrained Baseline H.264.
async function decodableCodecs(stream) {
  const properties = stream && stream.properties;
  const own = properties ? decoderCodecString(properties, { vp8: 1, vp9: 2, av1: 3, h264: 4 }[properties.codec]) : null;
  const candidates = [[own, own], [WEBCODECS_CODEC[CODEC_H264], H264_RENDITION_PREFIX]];
  const decodes = [];
  for (const [codec, said] of candidates) {
    if (!codec || decodes.includes(said)) continue;
    const support = await VideoDecoder.isConfigSupported({ codec }).catch(() => ({ supported: false }));
    if (support.supported) decodes.push(said);
  }
  return decodes;
}

/// The codecs this browser decodes, in the console (a stream in another will not play).
async function reportDecoders() {
  for (const codec of [CODEC_VP9, CODEC_AV1]) {
    const support = await VideoDecoder.isConfigSupported({ codec: WEBCODECS_CODEC[codec] }).catch(() => ({ supported: false }));
    if (!support.supported) console.warn(`screenpub viewer: this browser reports no ${CODEC_NAME[codec]} decoder; streams in it will not play`);
  }
}

async function start() {
  // The page's state, readable from the console (and by automated checks) as `screenViewer`.
  const state = createViewerState();
  window.screenViewer = state;
  const parameters = new URLSearchParams(location.search);
  const token = parameters.get('token');
  const hls = parameters.get('hls') === '1';
  if (!token) {
    showProblem(state, `This link has no token. Open the viewer URL that screenpub or the relay printed (…/view/SESSION?token=…${hls ? '&hls=1' : ''}).`);
    return;
  }
  if (hls) {
    // HLS mode: the picture through Media Source Extensions, its timed metadata from the segments; no chat.
    const session = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '');
    new HLSPlayer(session, token, state).start().catch((error) => showProblem(state, `HLS: ${error.message}`));
    return;
  }
  if (typeof VideoDecoder === 'undefined') {
    showProblem(state, window.isSecureContext
      ? 'This browser cannot decode video here: it lacks WebCodecs (VideoDecoder). Use a current Chromium, Chrome, Edge, Firefox (130 or later) or Safari (16.4 or later).'
      : 'WebCodecs is only available on secure pages. Open this viewer over https, or on localhost / 127.0.0.1 (for example through an SSH tunnel: ssh -L PORT:127.0.0.1:PORT host).');
    return;
  }
  await reportDecoders();
  const viewer = new Viewer(token, state);
  page.chatForm.addEventListener('submit', (event) => {
    event.preventDefault();
    viewer.sendChat(page.chatInput.value);
    page.chatInput.value = '';
  });
  window.screenViewerSendChat = (text) => viewer.sendChat(text);
  page.sound.addEventListener('click', () => viewer.toggleSound());
  page.record.addEventListener('click', () => viewer.archives.toggle());
  page.fullscreen.addEventListener('click', () => {
    if (document.fullscreenElement) document.exitFullscreen();
    else page.stage.requestFullscreen().catch((error) => viewer.chat.showNotice(`Fullscreen is not allowed here: ${error.message}`));
  });
  viewer.renderSoundButton();
  viewer.connect();
}

start();
