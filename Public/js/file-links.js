// Signed URLs of attachments (docs/protocol.md "Files": POST /v1/files/links). Every id asked for in
// one moment goes in one request (at most 100 a request); a URL is reused until a minute before it
// expires. An id the server leaves out (not mine to see, or gone) resolves to null.

const MARGIN_MS = 60000;
const BATCH = 100;

export class FileLinks {
  constructor(api) {
    this.api = api;
    this.cache = new Map();    // id → { url, expiresAt }
    this.waiting = new Map();  // id → [resolve]
    this.timer = null;
  }

  /** The URL of attachment `id` (a path on this origin), or null. */
  get(id) {
    const cached = this.cache.get(id);
    if (cached && cached.expiresAt - MARGIN_MS > Date.now()) return Promise.resolve(cached.url);
    return new Promise((resolve) => {
      this.waiting.set(id, [...(this.waiting.get(id) ?? []), resolve]);
      this.timer ??= setTimeout(() => this.flush(), 0);
    });
  }

  /** A new URL, whatever is cached (an <img> that failed with the one it had). */
  fresh(id) {
    this.cache.delete(id);
    return this.get(id);
  }

  /** Whether the cached URL of `id` still has a while to go (a download link about to be followed). */
  isFresh(id) {
    const cached = this.cache.get(id);
    return Boolean(cached && cached.expiresAt - MARGIN_MS > Date.now());
  }

  async flush() {
    this.timer = null;
    const batch = [...this.waiting].slice(0, BATCH);
    for (const [id] of batch) this.waiting.delete(id);
    if (this.waiting.size) this.timer = setTimeout(() => this.flush(), 0);
    let links = [];
    try {
      links = (await this.api.request("POST", "/v1/files/links", { ids: batch.map(([id]) => id) }))?.links ?? [];
    } catch {
      links = [];  // offline: the callers try again when it matters to them
    }
    const byId = new Map(links.map((link) => [link.id, link]));
    for (const [id, resolvers] of batch) {
      const link = byId.get(id);
      if (link) this.cache.set(id, { url: link.url, expiresAt: link.expiresAt });
      for (const resolve of resolvers) resolve(link?.url ?? null);
    }
  }
}

/** The same URL, asking the server to serve it as a download (images are shown inline otherwise). */
export function downloadUrl(url) {
  const parsed = new URL(url, window.location.href);
  parsed.searchParams.set("download", "1");
  return parsed.origin === window.location.origin ? `${parsed.pathname}${parsed.search}` : parsed.href;
}
