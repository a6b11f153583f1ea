// The live viewer's sound: Opus decoded with WebCodecs' AudioDecoder into an AudioWorklet, each chunk played at
// its capture time plus a playout delay (playoutDelayMs) that lines it up with the pictures.
import { median } from './wire.js';

// Sound is played this long after capture at least (its jitter buffer), more when the pictures take longer.
export const AUDIO_TARGET_DELAY_MS = 60;
export const AUDIO_MAX_DELAY_MS = 1000;
// A sound frame's arrival latency is padded by this much (the worklet's own quantum and scheduling).
const ARRIVAL_MARGIN_MS = 20;

/// The playout delay (ms) from the sound's recent arrival latencies and the pictures' capture → display
/// latencies: the jitter buffer at least, past the 95th percentile of the sound's arrivals, as long as the
/// pictures take (their median), and never more than AUDIO_MAX_DELAY_MS. Pure (tested on its own).
export function playoutDelayMs(arrivalLatencies, videoLatencies) {
  const sorted = arrivalLatencies.filter(Number.isFinite).sort((a, b) => a - b);
  const arrival = sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] : 0;
  const pictures = median(videoLatencies.filter(Number.isFinite));
  const delay = Math.max(AUDIO_TARGET_DELAY_MS, arrival + ARRIVAL_MARGIN_MS, Number.isNaN(pictures) ? 0 : pictures);
  return Math.min(delay, AUDIO_MAX_DELAY_MS);
}

/// Plays one stream's sound: Opus through WebCodecs' AudioDecoder, into an AudioWorklet that plays each chunk
/// at its capture time plus a playout delay: at least AUDIO_TARGET_DELAY_MS (the jitter buffer), and as long as
/// the pictures take from capture to screen, so that sound and pictures line up. The delay follows the
/// measured latencies (wall clocks of publisher and viewer, as the picture's latency does).
export class AudioPlayer {
  /// `state`: the page's state (counters, whether sound plays); `latencies`: the picture's capture → display
  /// latencies (ms), shared with its player.
  constructor(state, latencies) {
    this.state = state;
    this.videoLatencies = latencies;
    this.decoder = null;
    this.channels = 0;
    this.arrivalLatencies = [];
    this.pending = []; // frames being decoded, in order (the decoder's outputs come in the same order)
    this.context = null;
    this.node = null;
    this.gain = null;
  }

  feed(frame) {
    this.state.audioFramesReceived += 1;
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

  delayMs() { return playoutDelayMs(this.arrivalLatencies, this.videoLatencies); }

  play(data) {
    this.state.audioFramesDecoded += 1;
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
    this.state.audioDelayMs = Math.round(this.delayMs());
    const start = this.context.currentTime + (frame.wallClockMs + this.state.audioDelayMs - Date.now()) / 1000;
    this.node.port.postMessage({ start, channels }, channels.map((samples) => samples.buffer));
  }

  /// Starts the output (after a click: browsers allow sound only then); nothing plays before.
  async enable() {
    if (!this.context) {
      this.context = new AudioContext({ sampleRate: 48000, latencyHint: 'interactive' });
      await this.context.audioWorklet.addModule('/viewer/viewer-audio-worklet.js');
      this.node = new AudioWorkletNode(this.context, 'screenpub-sound', { outputChannelCount: [2] });
      this.node.port.onmessage = (event) => { this.state.audioWorklet = event.data; };
      this.gain = new GainNode(this.context);
      this.node.connect(this.gain).connect(this.context.destination);
    }
    await this.context.resume();
    this.gain.gain.value = 1;
    this.state.audioPlaying = true;
  }

  disable() {
    if (this.gain) this.gain.gain.value = 0;
    this.state.audioPlaying = false;
  }

  fail(error) {
    this.state.audioDecoderErrors += 1;
    console.warn('screenpub viewer: audio decoder error', error);
    this.close();
  }

  close() {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = null;
    this.pending = [];
  }
}
