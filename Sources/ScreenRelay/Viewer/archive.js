// screenpub archive view: plays a recorded stream and shows, in sync with the picture on screen, the
// metadata the publisher attached to that frame (from GET /archive/{id}/metadata, the file's timed metadata
// track). The token in the page's URL (a moderator token) authorises the calls.

const page = {
  status: document.getElementById('status'),
  problem: document.getElementById('problem'),
  video: document.getElementById('recording'),
  metadata: document.getElementById('metadata'),
  captured: document.getElementById('captured'),
  frame: document.getElementById('frame'),
  details: document.getElementById('details'),
};

/// What the page shows, readable as `archiveViewer` (by automated checks too).
const archiveViewer = { status: 'loading', cues: 0, shownIndex: null, shownMetadata: null, problem: null };
window.archiveViewer = archiveViewer;

function setStatus(text) {
  archiveViewer.status = text;
  page.status.textContent = text;
}

function showProblem(text) {
  archiveViewer.problem = text;
  page.problem.textContent = text;
  page.problem.hidden = false;
  setStatus('Cannot play');
}

/// The last cue at or before `time` (cues are in time order): binary search.
function cueAt(cues, time) {
  let low = 0, high = cues.length - 1, found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (cues[middle].time <= time + 0.0005) { found = middle; low = middle + 1; } else { high = middle - 1; }
  }
  return found >= 0 ? cues[found] : null;
}

function show(cues, time) {
  const cue = cueAt(cues, time);
  if (!cue || cue.index === archiveViewer.shownIndex) return;
  archiveViewer.shownIndex = cue.index;
  archiveViewer.shownMetadata = cue.metadata ?? ('base64:' + cue.metadataBase64);
  page.metadata.textContent = archiveViewer.shownMetadata || '(none)';
  page.captured.textContent = cue.wallClock;
  page.frame.textContent = `${cue.index} at ${cue.time.toFixed(3)} s${cue.keyframe ? ' (key)' : ''}`;
}

/// A sentence for a refused call: what it means for the person holding this link.
function refusal(status, body) {
  let said = '';
  try { said = JSON.parse(body).error.message; } catch { said = body.slice(0, 200); }
  switch (status) {
    case 401: return 'This link\'s token is not valid any more (expired, or from another relay). Ask the session\'s moderator for a new link.';
    case 403: return 'This link lets you watch the session, not its recordings: opening a recording needs a moderator\'s link.';
    case 404: return 'There is no such recording: it may have been deleted, or it has no frames yet.';
    case 503: return 'This relay keeps no recordings.';
    default: return `The relay could not show this recording (HTTP ${status}${said ? `: ${said}` : ''}).`;
  }
}

async function start() {
  const match = location.pathname.match(/^\/archive\/([^/]+)\/view$/);
  const token = new URLSearchParams(location.search).get('token');
  if (!match || !token) {
    showProblem('Open this page as /archive/ID/view?token=MODERATOR-TOKEN.');
    return;
  }
  const id = match[1];
  const query = `?token=${encodeURIComponent(token)}`;
  const answer = async (path) => {
    const response = await fetch(`/archive/${id}${path}${query}`);
    if (!response.ok) throw new Error(refusal(response.status, await response.text()));
    return response.json();
  };
  let archive, cues;
  try {
    [archive, cues] = await Promise.all([answer(''), answer('/metadata')]);
  } catch (error) {
    showProblem(error.message);
    return;
  }
  for (const [name, value] of [['Name', archive.name || '–'], ['Status', archive.status + (archive.reason ? ` (${archive.reason})` : '')],
    ['Recorded', archive.createdAt], ['Duration', `${archive.duration.toFixed(1)} s`], ['Size', `${archive.resolution}, ${archive.size} bytes`]]) {
    const term = document.createElement('dt');
    term.textContent = name;
    const detail = document.createElement('dd');
    detail.textContent = value;
    page.details.append(term, detail);
  }
  archiveViewer.cues = cues.length;
  const video = page.video;
  // Per presented frame where the browser can say so, else on every time update (seeks included).
  if ('requestVideoFrameCallback' in video) {
    const onFrame = (_, frame) => { show(cues, frame.mediaTime); video.requestVideoFrameCallback(onFrame); };
    video.requestVideoFrameCallback(onFrame);
  }
  video.addEventListener('timeupdate', () => show(cues, video.currentTime));
  video.addEventListener('seeked', () => show(cues, video.currentTime));
  video.addEventListener('loadeddata', () => { setStatus(`${cues.length} frames with metadata`); show(cues, video.currentTime); });
  video.addEventListener('error', () => showProblem(`The browser cannot play this recording (${video.error?.message || 'media error'}).`));
  video.src = `/archive/${id}/download${query}`;
}

start();
