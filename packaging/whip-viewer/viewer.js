// The WHIP viewer page: JanusSubscriber brings the stream, FrameMetadataPairing pairs each shown frame with its
// metadata. What it shows is also in window.whipViewer (tests and scripts read it).
import { FrameMetadataPairing } from "./frame-metadata.js";
import { JanusSubscriber } from "./janus-subscriber.js";

const parameters = new URLSearchParams(location.search);
const janusURL = parameters.get("janus") || `${location.protocol}//${location.hostname}:8088/janus`;
const room = Number(parameters.get("room") || 1234);
const $ = (id) => document.getElementById(id);
const video = $("video");
const pairing = new FrameMetadataPairing();
const SHOWN_KEPT = 2000;

const state = {
  framesShown: 0, framesPaired: 0, shown: [], lastMetadata: null, lastLatencyMs: null, medianLatencyMs: null,
  messages: 0, lateMessages: 0, dataChannel: "none", audioTracks: 0, peakLevel: 0, level: 0, status: "starting",
  get rejectedMessages() { return pairing.rejected; },
};
window.whipViewer = state;
const latencies = [];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : null;
}

pairing.watch(video, (shown) => {
  const entry = { rtpTimestamp: shown.rtpTimestamp, metadata: shown.metadata, captureToDisplayMs: shown.captureToDisplayMs, late: shown.late };
  if (shown.late) {
    // The message of the frame on screen came after it: the frame's entry gets it.
    const last = state.shown[state.shown.length - 1];
    if (last && last.rtpTimestamp === shown.rtpTimestamp) Object.assign(last, entry);
    state.lateMessages += 1;
  } else {
    state.framesShown += 1;
    $("frames").textContent = String(state.framesShown);
    state.shown.push(entry);
    if (state.shown.length > SHOWN_KEPT) state.shown.shift();
  }
  if (shown.message === null) return;
  state.framesPaired += 1;
  state.lastMetadata = shown.metadata;
  $("metadata").textContent = shown.metadata;
  state.lastLatencyMs = Math.round(shown.captureToDisplayMs);
  latencies.push(state.lastLatencyMs);
  if (latencies.length > 50) latencies.shift();
  state.medianLatencyMs = median(latencies);
  $("latency").textContent = `${state.lastLatencyMs} ms (median ${state.medianLatencyMs} ms)`;
});

let meter = null;
function listen(stream) {
  if (meter || stream.getAudioTracks().length === 0) return;
  state.audioTracks = stream.getAudioTracks().length;
  const context = new AudioContext();
  const analyser = context.createAnalyser();
  analyser.fftSize = 1024;
  context.createMediaStreamSource(stream).connect(analyser);
  const samples = new Float32Array(analyser.fftSize);
  meter = setInterval(() => {
    if (context.state === "suspended") context.resume().catch(() => {});
    analyser.getFloatTimeDomainData(samples);
    let sum = 0;
    for (const sample of samples) sum += sample * sample;
    state.level = Math.sqrt(sum / samples.length);
    state.peakLevel = Math.max(state.peakLevel, state.level);
    $("level").firstElementChild.style.width = `${Math.min(100, state.level * 300)}%`;
  }, 50);
}

const subscriber = new JanusSubscriber(janusURL, room, {
  onStatus: (text) => { state.status = text; $("status").textContent = text; },
  onTrack: (stream) => {
    if (video.srcObject !== stream) video.srcObject = stream;
    video.play().catch(() => {
      // Autoplay with sound needs a gesture in most browsers: start muted, offer the sound.
      video.muted = true;
      video.play().catch(() => {});
      $("unmute").hidden = false;
    });
    listen(stream);
  },
  onDataChannel: (channel) => {
    channel.binaryType = "arraybuffer";
    state.dataChannel = channel.label;
    channel.onmessage = (event) => { state.messages += 1; pairing.addMessage(event.data); };
  },
});
$("unmute").onclick = () => { video.muted = false; $("unmute").hidden = true; };
window.whipSubscriber = subscriber;
subscriber.start().catch((error) => { state.status = error.message; $("status").textContent = error.message; });
