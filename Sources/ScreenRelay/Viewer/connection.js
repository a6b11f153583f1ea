// The live viewer's connection to the relay: a WebSocket that says hello with the page's token, hands control
// messages and media frames on, and reconnects after a backoff unless the relay refused this viewer. When to
// reconnect is a reducer (reconnection), tested on its own.

export const RECONNECT_DELAYS_MS = [250, 500, 1000, 2000, 4000, 8000];
// The WebSocket close code with which the relay refuses a token: retrying would be refused again.
const POLICY_VIOLATION = 1008;

/// What the connection does next: `state` is { attempt, fatal }; `event` is { type: 'welcomed' } (the relay took
/// this viewer), { type: 'fatal' } (it refused it in a message) or { type: 'closed', code, reason }. Returns the
/// new state and an action: { type: 'none' }, { type: 'stop', text } or { type: 'retry', delayMs } (the delay
/// before jitter, growing with each attempt since the last welcome).
export function reconnection(state, event) {
  switch (event.type) {
    case 'welcomed': return { state: { ...state, attempt: 0 }, action: { type: 'none' } };
    case 'fatal': return { state: { ...state, fatal: true }, action: { type: 'none' } };
    case 'closed': {
      if (state.fatal) return { state, action: { type: 'stop', text: null } };
      if (event.code === POLICY_VIOLATION) {
        return {
          state: { ...state, fatal: true },
          action: { type: 'stop', text: `The relay refused this viewer: ${event.reason || 'policy violation'}. Ask for a new viewer link.` },
        };
      }
      const delayMs = RECONNECT_DELAYS_MS[Math.min(state.attempt, RECONNECT_DELAYS_MS.length - 1)];
      return { state: { ...state, attempt: state.attempt + 1 }, action: { type: 'retry', delayMs } };
    }
    default: return { state, action: { type: 'none' } };
  }
}

/// One relay connection at a time for this page. `handlers`: onControl(message), onMedia(buffer), onClosed()
/// (the socket is gone), onRetry(delayMs), onStopped(text or null).
export class RelayConnection {
  constructor(token, handlers) {
    this.token = token;
    this.handlers = handlers;
    this.socket = null;
    this.state = { attempt: 0, fatal: false };
  }

  connect() {
    const url = new URL('/ws', location.href);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const socket = new WebSocket(url);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    socket.onopen = () => this.send({ type: 'hello', token: this.token, client: 'screenpub-viewer/1' });
    socket.onmessage = (event) => {
      if (typeof event.data !== 'string') { this.handlers.onMedia(event.data); return; }
      let message;
      try { message = JSON.parse(event.data); } catch { console.warn('screenpub viewer: bad control message', event.data); return; }
      this.handlers.onControl(message);
    };
    socket.onclose = (event) => this.closed(event);
  }

  send(message) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ v: 1, ...message }));
  }

  /// The relay welcomed this viewer, or refused it for good.
  welcomed() { this.step({ type: 'welcomed' }); }
  refused() { this.step({ type: 'fatal' }); }

  closed(event) {
    this.handlers.onClosed();
    const action = this.step({ type: 'closed', code: event.code, reason: event.reason });
    if (action.type === 'stop') this.handlers.onStopped(action.text);
    if (action.type === 'retry') {
      this.handlers.onRetry(action.delayMs);
      setTimeout(() => this.connect(), action.delayMs * (0.8 + 0.4 * Math.random()));
    }
  }

  step(event) {
    const { state, action } = reconnection(this.state, event);
    this.state = state;
    return action;
  }
}
