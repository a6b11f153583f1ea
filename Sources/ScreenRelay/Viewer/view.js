// What the viewer page shows, shared by the live player (viewer.js) and the HLS player (viewer-hls.js): the
// page's elements, the shape of the state the page keeps (made once by viewer.js, readable from the console and
// by automated checks as `screenViewer`), and the status line.

/// The page's elements (none without a document: node's tests import the pure parts of the modules that use it).
export const page = typeof document === 'undefined' ? {} : {
  status: document.getElementById('status'),
  rendition: document.getElementById('rendition'),
  problem: document.getElementById('problem'),
  canvas: document.getElementById('screen'),
  metadata: document.getElementById('metadata'),
  latency: document.getElementById('latency'),
  size: document.getElementById('size'),
  rate: document.getElementById('rate'),
  frames: document.getElementById('frames'),
  streams: document.getElementById('streams'),
  chat: document.getElementById('chat'),
  chatForm: document.getElementById('chat-form'),
  chatInput: document.getElementById('chat-input'),
  recordingBadge: document.getElementById('recording-badge'),
  pausedBadge: document.getElementById('paused-badge'),
  sound: document.getElementById('sound'),
  soundLabel: document.getElementById('sound-label'),
  soundOn: document.getElementById('sound-on-icon'),
  soundOff: document.getElementById('sound-off-icon'),
  mutedBadge: document.getElementById('muted-badge'),
  slowBadge: document.getElementById('slow-badge'),
  title: document.getElementById('title'),
  viewers: document.getElementById('viewers'),
  viewerCount: document.getElementById('viewer-count'),
  fullscreen: document.getElementById('fullscreen'),
  stage: document.getElementById('stage'),
  moderator: document.getElementById('moderator'),
  record: document.getElementById('record'),
  archives: document.getElementById('archives'),
};

/// A fresh state of what the viewer shows: viewer.js makes one and hands it to each part.
export function createViewerState() {
  return {
    status: 'connecting',
    connectionId: null,
    sessionId: null,
    streams: new Map(),
    currentStreamId: null,
    /// The watched stream's publisher has paused it (its `hasVideo` is false); the last picture stays.
    paused: false,
    framesDecoded: 0,
    framesSkipped: 0,
    /// Catch-up pictures decoded and not shown (older than the one they lead to), and pictures not shown
    /// because they were older than the one on screen.
    catchUpFrames: 0,
    staleFrames: 0,
    /// The wall-clock capture time (ms) of the picture on screen: how old what the viewer sees is.
    shownCaptureMs: null,
    decoderErrors: 0,
    lastMetadata: null,
    lastLatencyMs: null,
    /// The WebCodecs codec string the decoder was configured with (the one the publisher announced, or the
    /// rendition's that serves this page), and the rendition line the status area shows for it.
    codecString: null,
    rendition: null,
    /// What this page told the relay it decodes (`subscribe`'s `decodes`), and the stream id of the rendition that
    /// serves it (null: the stream as published).
    decodes: [],
    renditionStreamId: null,
    width: 0,
    height: 0,
    problem: null,
    chat: [], // [{from, sender, text}] as shown
    recording: null, // the archive id while the session is being recorded
    /// This page's role (from the relay's welcome), the session's title, who is connected (connection id →
    /// {role, name}) and how many of them watch (subscribers and moderators).
    role: null,
    title: '',
    connections: new Map(),
    viewerCount: 0,
    /// Moderators: the session's archives as last listed ([{id, name, status, duration, size}]).
    archives: [],
    /// Sound: frames received and decoded, whether the presenter muted it, whether this page plays it (browsers
    /// wait for a click), the playout delay in use, and what the worklet reported.
    audioFramesReceived: 0,
    audioFramesDecoded: 0,
    audioDecoderErrors: 0,
    audioMuted: false,
    audioPlaying: false,
    audioDelayMs: null,
    audioWorklet: null,
  };
}

export function setStatus(state, text) {
  state.status = text;
  page.status.textContent = text;
}

/// Shows which rendition the page plays ("AV1 (av01.0.08M.08)") beside the status.
export function showRendition(state, text) {
  state.rendition = text;
  page.rendition.textContent = text;
  page.rendition.hidden = false;
}

export function showProblem(state, text) {
  state.problem = text;
  page.problem.textContent = text;
  page.problem.hidden = false;
  setStatus(state, 'Cannot play');
}
