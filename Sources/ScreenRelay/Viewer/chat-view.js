// The live viewer's chat and event lines: what the session's signals say, shown as text (never HTML), the
// newest MAX_CHAT_LINES kept.
import { displayName } from './wire.js';
import { page } from './view.js';

export const MAX_SIGNAL_DATA = 8192;
const MAX_CHAT_LINES = 200;

/// Why a chat line cannot be sent (null: it can): empty, or longer than a signal may be. Pure.
export function chatRefusal(text) {
  if (!text.trim()) return '';
  if (new TextEncoder().encode(text).length > MAX_SIGNAL_DATA) return `Not sent: a message may hold at most ${MAX_SIGNAL_DATA} bytes.`;
  return null;
}

/// Who a signal is from, as the chat shows it: the server, a known connection, or what the signal says.
export function senderName(signal, connections) {
  if (signal.from === undefined || signal.from === null) return 'server';
  const from = connections.get(signal.from);
  return from ? from.name : displayName(null, signal.fromData);
}

export class ChatView {
  /// `state`: the page's state (its connections, its chat as shown).
  constructor(state) {
    this.state = state;
  }

  showChat(signal) {
    const sender = senderName(signal, this.state.connections);
    const mine = signal.from === this.state.connectionId;
    this.state.chat.push({ from: signal.from ?? null, sender, text: signal.data });
    const item = document.createElement('li');
    if (mine) item.className = 'mine';
    const who = document.createElement('span');
    who.className = 'sender';
    who.textContent = mine ? 'you' : sender;
    item.append(who, document.createTextNode(signal.data));
    this.append(item);
  }

  showNotice(text) {
    const item = document.createElement('li');
    item.className = 'notice';
    item.textContent = text;
    this.append(item);
  }

  append(item) {
    page.chat.append(item);
    while (page.chat.children.length > MAX_CHAT_LINES) page.chat.firstElementChild.remove();
    page.chat.scrollTop = page.chat.scrollHeight;
  }
}
