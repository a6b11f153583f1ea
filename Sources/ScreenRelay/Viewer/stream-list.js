// The live viewer's list of the session's streams, and which one it watches when it has none.
import { page } from './view.js';

/// The stream to watch when none is: the first live screen stream, else the first live one; null for none. Pure.
export function chooseStream(streams) {
  const live = [...streams.values()].filter((stream) => !stream.ended);
  const choice = live.find((stream) => stream.properties.videoType === 'screen') || live[0];
  return choice ? choice.streamId : null;
}

/// What a stream's line says. Pure.
export function streamLine(stream) {
  const p = stream.properties;
  return `${stream.name || 'stream'} · ${p.videoType} ${p.width}×${p.height} ${String(p.codec).toUpperCase()} ${p.estimatedFramesPerSecond} fps`;
}

/// Lists `streams`, the watched one (`currentStreamId`) marked; a click on a live one calls `pick(streamId)`.
export function renderStreams(streams, currentStreamId, pick) {
  const list = page.streams;
  list.replaceChildren();
  if (streams.size === 0) {
    list.append(Object.assign(document.createElement('li'), { className: 'empty', textContent: 'none yet' }));
    return;
  }
  for (const stream of streams.values()) {
    const item = document.createElement('li');
    item.textContent = streamLine(stream);
    item.title = `stream ${stream.streamId} from ${stream.connectionId}`;
    if (stream.ended) item.className = 'ended';
    else {
      if (stream.streamId === currentStreamId) item.className = 'current';
      item.onclick = () => pick(stream.streamId);
    }
    list.append(item);
  }
}
