// The viewer's session as a reducer: a control message from the relay updates the session's state (the fields
// of `screenViewer` it owns: who this page is, the streams, who is connected, whether it is recorded) and
// answers what the page must do, as effects. No page, no socket: tested on its own (Tests/Viewer/session.test.mjs).
import { displayName, receptionText } from './wire.js';

/// The codes after which the relay will not take this page back: a new link is needed.
const REFUSALS = ['invalidToken', 'tokenExpired', 'wrongSession', 'forbidden'];

/// A fresh session state (the view's `screenViewer` starts with these fields).
export function emptySession() {
  return { connectionId: null, role: null, sessionId: null, streams: new Map(), currentStreamId: null, connections: new Map(), recording: null };
}

function connected(state, connection) {
  state.connections.set(connection.connectionId, { role: connection.role, name: displayName(connection.role, connection.data) });
}

/// Applies `message` to `state` (in place) and returns the effects, in order, each `{ type, … }`:
/// welcomed, status {text}, notice {text}, chat {message}, fatal {text}, loadSession {sessionId}, moderator
/// {shown}, loadArchives, pickStream, streamEnded {reason}, showPaused, reception {text: null when every frame
/// comes}, recording, renderViewers, renderStreams.
export function reduce(state, message) {
  const effects = [];
  const moderatorArchives = () => { if (state.role === 'moderator') effects.push({ type: 'loadArchives' }); };
  switch (message.type) {
    case 'welcome':
      state.connectionId = message.connectionId;
      state.role = message.role;
      state.sessionId = message.sessionId;
      state.connections.clear();
      state.connections.set(message.connectionId, { role: message.role, name: 'you' });
      for (const connection of message.connections || []) connected(state, connection);
      state.streams.clear();
      for (const stream of message.streams || []) state.streams.set(stream.streamId, { ...stream, ended: false });
      state.currentStreamId = null;
      effects.push({ type: 'welcomed' }, { type: 'renderViewers' }, { type: 'loadSession', sessionId: message.sessionId },
        { type: 'moderator', shown: message.role === 'moderator' });
      moderatorArchives();
      effects.push({ type: 'status', text: state.streams.size ? 'Connected' : 'Connected; waiting for the screen to be shared…' },
        { type: 'pickStream' });
      break;
    case 'streamCreated':
      state.streams.set(message.stream.streamId, { ...message.stream, ended: false });
      effects.push({ type: 'pickStream' });
      break;
    case 'streamDestroyed': {
      const stream = state.streams.get(message.streamId);
      if (stream) stream.ended = true;
      if (state.currentStreamId === message.streamId) {
        // The last picture stays on screen; a publisher that comes back publishes a new stream.
        state.currentStreamId = null;
        effects.push({ type: 'streamEnded', reason: message.reason }, { type: 'showPaused' },
          { type: 'status', text: `The stream ended (${message.reason}); waiting for the publisher…` });
      }
      effects.push({ type: 'pickStream' });
      break;
    }
    case 'signal':
      if (message.signalType === 'chat') effects.push({ type: 'chat', message });
      break;
    case 'archiveStarted':
      state.recording = message.archiveId;
      effects.push({ type: 'recording', name: message.name || null });
      moderatorArchives();
      break;
    case 'archiveStopped':
      state.recording = null;
      effects.push({ type: 'recording' }, { type: 'notice', text: `Recording ${message.status}${message.reason ? `: ${message.reason}` : ''}.` });
      moderatorArchives();
      break;
    case 'connectionCreated':
      connected(state, message.connection);
      if (message.connection.connectionId !== state.connectionId) {
        effects.push({ type: 'notice', text: `${state.connections.get(message.connection.connectionId).name} joined.` });
      }
      effects.push({ type: 'renderViewers' });
      break;
    case 'connectionDestroyed': {
      const gone = state.connections.get(message.connectionId);
      state.connections.delete(message.connectionId);
      if (gone) effects.push({ type: 'notice', text: `${gone.name} left.` });
      effects.push({ type: 'renderViewers' });
      break;
    }
    case 'subscribed':
      effects.push({ type: 'status', text: `Watching ${state.streams.get(message.streamId)?.name || 'stream ' + message.streamId}` },
        { type: 'showPaused' });
      break;
    case 'renditionChanged':
      if (message.streamId === state.currentStreamId) {
        state.renditionStreamId = message.rendition ? message.rendition.streamId : null;
        effects.push({ type: 'rendition', stream: message.rendition || state.streams.get(message.streamId) });
      }
      break;
    case 'subscriptionChanged':
      if (message.streamId === state.currentStreamId) {
        const stream = state.streams.get(message.streamId);
        effects.push({ type: 'reception', text: receptionText(message, stream?.properties?.estimatedFramesPerSecond) });
      }
      break;
    case 'streamPropertyChanged': {
      const stream = state.streams.get(message.streamId);
      if (stream) stream.properties = message.properties;
      if (message.streamId === state.currentStreamId) effects.push({ type: 'showPaused' });
      break;
    }
    case 'error':
      if (message.code === 'invalidSignal' || message.code === 'forbidden') effects.push({ type: 'notice', text: `Not sent: ${message.message}` });
      if (REFUSALS.includes(message.code)) {
        effects.push({ type: 'fatal', text: `The relay refused this viewer (${message.code}): ${message.message}. Ask for a new viewer link.` });
      }
      break;
    default:
      break; // messages the viewer does not show
  }
  effects.push({ type: 'renderStreams' });
  return effects;
}
