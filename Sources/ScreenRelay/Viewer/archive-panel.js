// The live viewer's recording panel, for moderators: the session's archives (the archive API with this page's
// moderator token), a button to start or stop recording, and a recording's length and size as it grows.
import { page } from './view.js';

// A growing recording's line is refreshed this often.
const REFRESH_MS = 5000;

/// A recording's line: its length and size, and whether it is still being recorded. Pure.
export function archiveLine(archive) {
  const size = archive.size >= 1e6 ? `${(archive.size / 1e6).toFixed(1)} MB` : `${Math.round(archive.size / 1e3)} kB`;
  return ` · ${archive.status === 'started' ? 'recording, ' : ''}${Math.round(archive.duration)} s, ${size}`;
}

export class ArchivePanel {
  /// `state`: the page's state (its archives, the recording in progress); `notice(text)`: tells the user.
  constructor(token, state, notice) {
    this.token = token;
    this.state = state;
    this.notice = notice;
    this.refresh = null;
  }

  async call(method, path, body) {
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

  async load() {
    try {
      this.state.archives = (await this.call('GET', '/archive')).items;
    } catch (error) {
      this.state.archives = [];
      page.archives.replaceChildren(Object.assign(document.createElement('li'), { className: 'empty', textContent: error.message }));
      return;
    }
    const recording = this.state.archives.find((archive) => archive.status === 'started');
    if (recording) this.state.recording = recording.id;
    this.renderButton();
    page.archives.replaceChildren();
    if (this.state.archives.length === 0) {
      page.archives.append(Object.assign(document.createElement('li'), { className: 'empty', textContent: 'no recordings yet' }));
    }
    for (const archive of this.state.archives) {
      const item = document.createElement('li');
      const link = document.createElement('a');
      link.href = `/archive/${encodeURIComponent(archive.id)}/view?token=${encodeURIComponent(this.token)}`;
      link.target = '_blank';
      link.rel = 'noopener';
      link.textContent = archive.name || new Date(archive.createdAt).toLocaleString();
      item.append(link, document.createTextNode(archiveLine(archive)));
      page.archives.append(item);
    }
    clearTimeout(this.refresh);
    if (recording) this.refresh = setTimeout(() => this.load(), REFRESH_MS);
  }

  renderButton() {
    page.record.textContent = this.state.recording ? '■ Stop recording' : '● Start recording';
    page.record.setAttribute('aria-pressed', String(Boolean(this.state.recording)));
  }

  async toggle() {
    page.record.disabled = true;
    try {
      if (this.state.recording) await this.call('POST', `/archive/${encodeURIComponent(this.state.recording)}/stop`);
      else await this.call('POST', '/archive', { sessionId: this.state.sessionId });
    } catch (error) {
      this.notice(`Recording: ${error.message}`);
    } finally {
      page.record.disabled = false;
    }
    await this.load();
  }
}
