// Subscribes to the (newest) publisher of a Janus VideoRoom over Janus's HTTP API (long-poll), as the WHIP viewer
// page needs it: the picture, the sound and the publisher's data channel on one RTCPeerConnection. Janus answers
// CORS, so the page may be served from anywhere. Resubscribes when the publisher comes back or the connection fails.

export class JanusSubscriber {
  /// `janusURL`: e.g. "https://janus.example.org/janus"; `room`: the VideoRoom's number. Callbacks:
  /// onTrack(MediaStream), onDataChannel(RTCDataChannel), onStatus(text).
  constructor(janusURL, room, callbacks) {
    this.url = janusURL.replace(/\/$/, "");
    this.room = room;
    this.callbacks = callbacks;
    this.session = null;
    this.handle = null;
    this.pc = null;
    this.stopped = false;
    this.stream = new MediaStream();
  }

  async request(path, body) {
    const transaction = Math.random().toString(36).slice(2);
    const response = await fetch(this.url + path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ ...body, transaction }),
    });
    const answer = await response.json();
    if (answer.janus === "error") throw new Error(`Janus: ${answer.error?.reason ?? "error"}`);
    return answer;
  }

  status(text) { this.callbacks.onStatus?.(text); }

  async start() {
    this.session = (await this.request("", { janus: "create" })).data.id;
    this.handle = (await this.request(`/${this.session}`, { janus: "attach", plugin: "janus.plugin.videoroom" })).data.id;
    this.poll();
    this.keepalive = setInterval(() => this.request(`/${this.session}`, { janus: "keepalive" }).catch(() => {}), 25000);
    await this.subscribe();
  }

  async message(body, jsep) {
    return this.request(`/${this.session}/${this.handle}`, { janus: "message", body, ...(jsep ? { jsep } : {}) });
  }

  /// Waits for a publisher in the room and subscribes to all its streams (video, audio, data).
  async subscribe() {
    this.status("waiting for a publisher…");
    let feed = null;
    while (!this.stopped && feed === null) {
      const listed = await this.message({ request: "listparticipants", room: this.room });
      const publishers = (listed.plugindata?.data?.participants ?? []).filter((p) => p.publisher);
      if (publishers.length) feed = publishers[publishers.length - 1].id;
      else await new Promise((resolve) => setTimeout(resolve, 500));
    }
    if (this.stopped) return;
    this.feed = feed;
    await this.message({ request: "join", ptype: "subscriber", room: this.room, streams: [{ feed }] });
  }

  /// Janus's events, one long-poll after another.
  async poll() {
    while (!this.stopped) {
      let events;
      try {
        const response = await fetch(`${this.url}/${this.session}?maxev=10&rid=${Date.now()}`);
        events = await response.json();
      } catch (error) {
        this.status(`Janus unreachable: ${error.message}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      for (const event of Array.isArray(events) ? events : [events]) await this.onEvent(event).catch((error) => this.status(error.message));
    }
  }

  async onEvent(event) {
    const data = event.plugindata?.data ?? {};
    if (event.jsep?.type === "offer") await this.answer(event.jsep);
    if (data.videoroom === "event" && (data.unpublished !== undefined || data.leaving !== undefined)) {
      const gone = data.unpublished ?? data.leaving;
      if (gone === this.feed || gone === "ok") this.resubscribe("the publisher left");
    }
  }

  async answer(offer) {
    if (this.pc) this.pc.close();
    const pc = new RTCPeerConnection();
    this.pc = pc;
    this.stream = new MediaStream();
    pc.ontrack = (event) => {
      // A screen is watched live: the smallest jitter buffer the browser allows (it still grows it on a jittery
      // network), as the relay's viewer shows a frame as soon as it is decoded.
      if ("jitterBufferTarget" in event.receiver) event.receiver.jitterBufferTarget = 0;
      this.stream.addTrack(event.track);
      this.callbacks.onTrack?.(this.stream);
    };
    pc.ondatachannel = (event) => this.callbacks.onDataChannel?.(event.channel);
    pc.onconnectionstatechange = () => {
      this.status(`WebRTC ${pc.connectionState}`);
      if (pc === this.pc && pc.connectionState === "failed") this.resubscribe("the connection failed");
    };
    await pc.setRemoteDescription(offer);
    // Janus relays a publisher's data to a subscriber only once a channel of the subscriber's own is open (its
    // "data ready"): this one says so; the publisher's messages then come on a channel Janus opens with their label.
    if (offer.sdp.includes("m=application")) pc.createDataChannel("JanusDataChannel");
    await pc.setLocalDescription(await pc.createAnswer());
    // Janus takes the candidates in the answer: wait for them rather than trickle.
    await new Promise((resolve) => {
      if (pc.iceGatheringState === "complete") return resolve();
      pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === "complete") resolve(); };
      setTimeout(resolve, 3000);
    });
    await this.message({ request: "start", room: this.room }, { type: "answer", sdp: pc.localDescription.sdp });
  }

  resubscribe(why) {
    if (this.resubscribing || this.stopped) return;
    this.resubscribing = true;
    this.status(`${why}: subscribing again`);
    setTimeout(async () => {
      try {
        await this.request(`/${this.session}/${this.handle}`, { janus: "detach" }).catch(() => {});
        this.handle = (await this.request(`/${this.session}`, { janus: "attach", plugin: "janus.plugin.videoroom" })).data.id;
        await this.subscribe();
      } finally {
        this.resubscribing = false;
      }
    }, 1000);
  }

  stop() {
    this.stopped = true;
    clearInterval(this.keepalive);
    this.pc?.close();
    this.request(`/${this.session}`, { janus: "destroy" }).catch(() => {});
  }
}
