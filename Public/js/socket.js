// The live connection: hello with the last processed position, reconnect with exponential backoff
// and jitter, and a hook for every frame. The store decides what frames mean.

export class LiveSocket {
  constructor({ token, getPosition, onFrame, onState }) {
    this.token = token;
    this.getPosition = getPosition;
    this.onFrame = onFrame;
    this.onState = onState;
    this.attempt = 0;
    this.closed = false;
    this.ws = null;
    this.timer = null;
  }

  start() {
    this.closed = false;
    this.connect();
    window.addEventListener("online", this.retryNow);
  }

  stop() {
    this.closed = true;
    clearTimeout(this.timer);
    window.removeEventListener("online", this.retryNow);
    this.ws?.close(1000);
    this.ws = null;
  }

  retryNow = () => {
    if (this.closed || this.ws) return;
    clearTimeout(this.timer);
    this.connect();
  };

  get isOpen() {
    return this.ws?.readyState === WebSocket.OPEN && this.welcomed;
  }

  send(frame) {
    if (!this.isOpen) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  connect() {
    this.onState("connecting");
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/v1/ws`);
    this.ws = ws;
    this.welcomed = false;
    ws.onopen = () => {
      const after = this.getPosition();
      ws.send(JSON.stringify(after == null ? { type: "hello", token: this.token } : { type: "hello", token: this.token, after }));
    };
    ws.onmessage = (event) => {
      let frame;
      try { frame = JSON.parse(event.data); } catch { return; }
      if (frame.type === "welcome") {
        this.welcomed = true;
        this.attempt = 0;
      }
      this.onFrame(frame);
      if (frame.type === "synced") this.onState("online");
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.welcomed = false;
      this.onState("offline", event.code);
      // 1008 after a revoked session comes with an `unauthorized` error, and the app signs out (stop()).
      if (this.closed) return;
      // Exponential backoff with full jitter: 0.5 s, 1 s, 2 s … up to 15 s.
      const ceiling = Math.min(15000, 500 * 2 ** this.attempt++);
      this.timer = setTimeout(() => this.connect(), Math.random() * ceiling);
    };
  }
}
