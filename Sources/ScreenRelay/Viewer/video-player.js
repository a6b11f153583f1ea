// The live viewer's picture: one stream's frames decoded with WebCodecs into the page's canvas, never showing
// the past as live (catch-up pictures are decoded, not shown; an older picture never replaces a newer one).
import { CODEC_H264, CODEC_NAME, HEADER_SIZE, decoderCodecString, describeMetadata, median, renditionText, unsupportedCodecText } from './wire.js';
import { sameBytes, toAvc } from './h264.js';
import { page, showProblem, showRendition } from './view.js';

const BT601 = { primaries: 'smpte170m', transfer: 'smpte170m', matrix: 'smpte170m', fullRange: false };
// More chunks than this waiting in the decoder means the viewer cannot keep up: skip to the next keyframe.
const MAX_DECODE_QUEUE = 8;

/// Decodes one stream into the canvas. A new player is made for every subscription, so a publisher that
/// reconnects (a new stream) starts from a clean decoder and its first keyframe.
export class VideoPlayer {
  /// `state`: the page's state (counters, what is shown); `requestKeyframe`: asks the relay for a keyframe.
  constructor(stream, state, requestKeyframe) {
    this.stream = stream;
    this.state = state;
    this.requestKeyframe = requestKeyframe;
    this.decoder = null;
    this.codec = null;
    this.codecString = null;
    this.description = null; // H.264: the avcC record the decoder was configured with
    this.waitingForKeyframe = true;
    this.unsupported = false; // no decoder for the stream here: told once, nothing more is decoded
    this.pending = new Map(); // chunk timestamp → the frame's header fields
    this.context = page.canvas.getContext('2d', { alpha: false });
    this.latencies = [];
    this.arrivals = []; // [time ms, bytes] over the last two seconds
    this.shownSequence = null; // the frame number of the picture on screen
  }

  feed(frame) {
    const now = performance.now();
    this.arrivals.push([now, frame.payload.byteLength + frame.metadata.byteLength + HEADER_SIZE]);
    while (this.arrivals.length && this.arrivals[0][0] < now - 2000) this.arrivals.shift();
    // (A catch-up burst fills the queue on purpose: its pictures are decoded, not shown.)
    if (this.decoder && this.decoder.decodeQueueSize > MAX_DECODE_QUEUE && !frame.keyframe && !frame.catchUp) {
      this.skip('the decoder is behind');
      return;
    }
    if (this.unsupported) return;
    if (this.waitingForKeyframe && !frame.keyframe) {
      this.state.framesSkipped += 1;
      return;
    }
    // An AV1 keyframe names its profile and level: a new one (a new picture size) means a new configuration.
    let codecString = decoderCodecString(this.stream.properties, frame.codec);
    let data = frame.payload;
    let description = null;
    if (frame.codec === CODEC_H264) {
      // Annex B on the wire; the avc form (a description from the keyframe's SPS and PPS) for every engine.
      const avc = toAvc(frame.payload);
      if (!avc) { this.skip('an H.264 frame with no picture in it'); return; }
      data = avc.data;
      description = avc.description || this.description;
      codecString = avc.codecString || this.codecString || codecString;
    }
    if (!this.decoder || this.decoder.state === 'closed' || this.codec !== frame.codec || this.codecString !== codecString
      || !sameBytes(description, this.description)) {
      this.openDecoder(frame.codec, codecString, description);
    }
    this.waitingForKeyframe = false;
    this.pending.set(frame.sequence, frame);
    try {
      this.decoder.decode(new EncodedVideoChunk({
        type: frame.keyframe ? 'key' : 'delta',
        timestamp: frame.sequence,
        data,
      }));
    } catch (error) {
      this.fail(error);
    }
  }

  openDecoder(codec, codecString, description) {
    this.closeDecoder();
    this.codec = codec;
    this.codecString = codecString;
    this.description = description;
    this.state.codecString = codecString;
    showRendition(this.state, renditionText(codecString));
    this.decoder = new VideoDecoder({
      output: (picture) => this.show(picture),
      error: (error) => this.fail(error),
    });
    // screenpub converts with libyuv's BT.601 studio-range matrix; VP8 cannot say so in its bitstream.
    const config = { codec: codecString, optimizeForLatency: true, colorSpace: BT601 };
    if (description) config.description = description;
    this.decoder.configure(config);
  }

  /// The relay now sends this subscription's pictures in another rendition (protocol 7's `renditionChanged`:
  /// `stream` is the rendition, or the stream itself): a decoder of its codec from its first keyframe, its own
  /// frame numbers.
  useRendition(stream) {
    this.stream = stream;
    this.closeDecoder();
    this.description = null;
    this.unsupported = false;
    this.shownSequence = null;
    this.waitingForKeyframe = true;
  }

  show(picture) {
    const frame = this.pending.get(picture.timestamp);
    for (const key of this.pending.keys()) { if (key <= picture.timestamp) this.pending.delete(key); }
    // Never the past as live: catch-up pictures only bring the decoder to the newest, and a picture older than
    // the one on screen is not drawn over it.
    // (Judged by the stream's frame numbers, not the publisher's wall clock, which may be stepped back.)
    if (frame && (frame.catchUp || (this.shownSequence !== null && frame.sequence < this.shownSequence))) {
      if (frame.catchUp) this.state.catchUpFrames += 1; else this.state.staleFrames += 1;
      picture.close();
      return;
    }
    const width = picture.displayWidth, height = picture.displayHeight;
    if (page.canvas.width !== width || page.canvas.height !== height) {
      page.canvas.width = width;
      page.canvas.height = height;
    }
    this.context.drawImage(picture, 0, 0);
    picture.close();
    this.state.framesDecoded += 1;
    this.state.width = width;
    this.state.height = height;
    page.frames.textContent = String(this.state.framesDecoded);
    page.size.textContent = `${width}×${height} ${CODEC_NAME[this.codec]} ${this.stream.properties.videoType}`;
    if (frame) {
      this.shownSequence = frame.sequence;
      this.state.shownCaptureMs = frame.wallClockMs;
      this.state.lastMetadata = describeMetadata(frame.metadata);
      page.metadata.textContent = this.state.lastMetadata;
      // Wall clocks of publisher and viewer: exact on one machine, otherwise as good as their clock sync.
      this.state.lastLatencyMs = Date.now() - frame.wallClockMs;
      this.latencies.push(this.state.lastLatencyMs);
      if (this.latencies.length > 50) this.latencies.shift();
      page.latency.textContent = `${this.state.lastLatencyMs} ms (median ${median(this.latencies)} ms)`;
    }
    const span = this.arrivals.length > 1 ? (this.arrivals[this.arrivals.length - 1][0] - this.arrivals[0][0]) / 1000 : 0;
    if (span > 0) {
      const bytes = this.arrivals.reduce((sum, [, size]) => sum + size, 0);
      page.rate.textContent = `${((this.arrivals.length - 1) / span).toFixed(1)} fps, ${(bytes * 8 / span / 1000).toFixed(0)} kbit/s`;
    }
  }

  /// Drops frames up to the next keyframe and asks the publisher (through the relay) for one.
  skip(reason) {
    this.state.framesSkipped += 1;
    if (!this.waitingForKeyframe) {
      this.waitingForKeyframe = true;
      console.info(`screenpub viewer: waiting for a keyframe: ${reason}`);
      this.requestKeyframe();
    }
  }

  fail(error) {
    this.state.decoderErrors += 1;
    if (error && error.name === 'NotSupportedError') {
      // No decoder for this profile here (a 4:4:4 stream in a browser without one): say so, ask for no keyframes.
      this.unsupported = true;
      this.closeDecoder();
      showProblem(this.state, unsupportedCodecText(this.codecString));
      return;
    }
    console.warn('screenpub viewer: decoder error', error);
    this.closeDecoder();
    this.skip(`decoder error: ${error.message || error}`);
  }

  closeDecoder() {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = null;
    this.pending.clear();
  }
}
