// The live connection: hello with the last processed position, reconnect with exponential backoff
// and jitter, and a hook for every frame. The store decides what frames mean.
//
// Heartbeat: a dead network leaves the socket "open" (no close ever comes), so after 15 s without a
// frame the socket pings, and a ping not answered within 5 s (or the browser going offline) drops
// the connection at once; the outbox stays, and the reconnect resumes. The server closes clients
// that send nothing for 90 s, so an idle tab pings well within that.
//
// Leaving the page closes the socket (pagehide): a page kept in the back/forward cache would
// otherwise hold its connection open, and its user "online", until the server's idle limit.
// Coming back to it (pageshow from the cache) reconnects and resumes.
const IDLE_PING_MS = 15000;
const DEAD_AFTER_MS = 5000;

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
    window.addEventListener("offline", this.dropLine);
    window.addEventListener("pagehide", this.leavePage);
    window.addEventListener("pageshow", this.returnToPage);
    this.heartbeat = setInterval(this.checkLine, 1000);
  }

  leavePage = () => {
    this.suspended = true;
    clearTimeout(this.timer);
    const ws = this.ws;
    if (!ws) return;
    this.ws = null;
    ws.onclose = null;
    ws.onmessage = null;
    try { ws.close(1000, "page closed"); } catch { /* already closing */ }
  };

  returnToPage = (event) => {
    if (!event.persisted || this.closed) return;
    this.suspended = false;
    this.retryNow();
  };

  stop() {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    window.removeEventListener("online", this.retryNow);
    window.removeEventListener("offline", this.dropLine);
    window.removeEventListener("pagehide", this.leavePage);
    window.removeEventListener("pageshow", this.returnToPage);
    this.ws?.close(1000);
    this.ws = null;
  }

  checkLine = () => {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    const now = Date.now();
    if (this.pingSentAt && now - this.pingSentAt > DEAD_AFTER_MS) {
      this.dropLine();
    } else if (!this.pingSentAt && now - this.lastFrameAt > IDLE_PING_MS) {
      this.pingSentAt = now;
      this.ws.send(JSON.stringify({ type: "ping", ref: "heartbeat" }));
    }
  };

  // The line is dead (or the browser says offline): forget this socket now rather than wait for a
  // close that a dead network never delivers.
  dropLine = () => {
    const ws = this.ws;
    if (!ws) return;
    ws.onclose = null;
    ws.onmessage = null;
    try { ws.close(); } catch { /* already closing */ }
    this.closed_(ws, 1006);
  };

  retryNow = () => {
    if (this.closed || this.suspended || this.ws) return;
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
    this.lastFrameAt = Date.now();
    this.pingSentAt = null;
    ws.onopen = () => {
      const after = this.getPosition();
      ws.send(JSON.stringify(after == null ? { type: "hello", token: this.token } : { type: "hello", token: this.token, after }));
    };
    ws.onmessage = (event) => {
      this.lastFrameAt = Date.now();
      this.pingSentAt = null;
      let frame;
      try { frame = JSON.parse(event.data); } catch { return; }
      if (frame.type === "welcome") {
        this.welcomed = true;
        this.attempt = 0;
      }
      this.onFrame(frame);
      if (frame.type === "synced") this.onState("online");
    };
    ws.onclose = (event) => this.closed_(ws, event.code);
  }

  closed_(ws, code) {
    if (this.ws !== ws) return;
    this.ws = null;
    this.welcomed = false;
    this.onState("offline", code);
    // 1008 after a revoked session comes with an `unauthorized` error, and the app signs out (stop()).
    if (this.closed || this.suspended) return;
    // Exponential backoff with full jitter: 0.5 s, 1 s, 2 s … up to 15 s.
    const ceiling = Math.min(15000, 500 * 2 ** this.attempt++);
    this.timer = setTimeout(() => this.connect(), Math.random() * ceiling);
  }
}
