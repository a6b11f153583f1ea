// screenpub viewer: the AudioWorklet that plays the stream's decoded sound. Chunks arrive from the page with
// the AudioContext time they are due at (their capture time plus the playout delay the page chose to line
// them up with the pictures); each output sample is taken from the chunk that covers its time, silence where
// none does (a gap, DTX). A chunk that comes more than MAX_LATE_SECONDS after its time is dropped.
'use strict';

const MAX_LATE_SECONDS = 0.2;
const MAX_QUEUED_CHUNKS = 100; // 2 s of 20 ms frames: a page that floods us loses the oldest

class ScreenpubSound extends AudioWorkletProcessor {
  constructor() {
    super();
    this.chunks = []; // {start, channels: [Float32Array]} in start order
    this.played = 0;
    this.dropped = 0;
    this.port.onmessage = (event) => {
      const chunk = event.data;
      if (chunk.start + chunk.channels[0].length / sampleRate < currentTime - MAX_LATE_SECONDS) {
        this.dropped += 1;
        return;
      }
      let index = this.chunks.length;
      while (index > 0 && this.chunks[index - 1].start > chunk.start) index -= 1;
      this.chunks.splice(index, 0, chunk);
      if (this.chunks.length > MAX_QUEUED_CHUNKS) { this.chunks.shift(); this.dropped += 1; }
    };
  }

  process(inputs, outputs) {
    const output = outputs[0];
    const frames = output[0].length;
    for (let i = 0; i < frames; i += 1) {
      const time = currentTime + i / sampleRate;
      // Chunks that ended before this sample are done.
      while (this.chunks.length && this.chunks[0].start + this.chunks[0].channels[0].length / sampleRate <= time) {
        this.chunks.shift();
        this.played += 1;
      }
      const chunk = this.chunks[0];
      const offset = chunk ? Math.floor((time - chunk.start) * sampleRate) : -1;
      for (let channel = 0; channel < output.length; channel += 1) {
        if (offset >= 0) {
          const source = chunk.channels[Math.min(channel, chunk.channels.length - 1)];
          output[channel][i] = source[offset];
        } else {
          output[channel][i] = 0;
        }
      }
    }
    if (currentFrame % (sampleRate / 2) < frames) this.port.postMessage({ played: this.played, dropped: this.dropped, queued: this.chunks.length });
    return true;
  }
}

registerProcessor('screenpub-sound', ScreenpubSound);
