// What I was writing in each chat, and the message I was answering: kept when I look at another
// chat and across a reload, as WhatsApp and Signal keep them. Per account in localStorage, and
// dropped when I sign out: unlike the outbox, a draft is nothing anyone is waiting for.
const LIMIT = 100;  // chats with a draft; the one written longest ago goes first
const SAVE_MS = 400;  // typing saves once a pause, not at every key (all drafts are one stored value)

export class ComposerDrafts {
  constructor(userId) {
    this.userId = userId;
    this.key = keyOf(userId);
    this.drafts = read(this.key);
  }

  /** `{text, replying}` of chat `id`, or null. */
  get(id) { return this.drafts.get(id) ?? null; }

  /** Keeps chat `id`'s draft; an empty one (no text, no reply) is forgotten. */
  keep(id, text, replying) {
    if (!id || this.forgotten) return;
    const previous = this.drafts.get(id);
    if (!text && !replying) {
      if (!previous) return;
      this.drafts.delete(id);
    } else {
      if (previous?.text === text && previous?.replying?.seq === replying?.seq) return;
      this.drafts.delete(id);  // to the end: the newest
      this.drafts.set(id, { text, replying: replying ?? null });
      while (this.drafts.size > LIMIT) this.drafts.delete(this.drafts.keys().next().value);
    }
    this.dirty = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), SAVE_MS);
  }

  /** Writes what is kept now (a pause in typing, another chat opened, the page going away). */
  flush() {
    clearTimeout(this.timer);
    if (this.forgotten || !this.dirty) return;
    this.dirty = false;
    try { localStorage.setItem(this.key, JSON.stringify([...this.drafts])); } catch { /* full: kept for this page only */ }
  }

  /** Signed out: the account's drafts go, and this page keeps none any more (its unload would). */
  forget() {
    this.forgotten = true;
    clearTimeout(this.timer);
    ComposerDrafts.forget(this.userId);
  }

  static forget(userId) { localStorage.removeItem(keyOf(userId)); }
}

function keyOf(userId) { return `parley.drafts.${userId}`; }

/** The stored drafts, each checked: another version or a hand-edited value must not break the page. */
function read(key) {
  try {
    const entries = JSON.parse(localStorage.getItem(key) ?? "[]");
    return new Map(Array.isArray(entries) ? entries.filter(isDraft).map(([id, draft]) => [id, { text: draft.text, replying: quote(draft.replying) }]) : []);
  } catch {
    return new Map();
  }
}

function isDraft(entry) {
  return Array.isArray(entry) && typeof entry[0] === "string" && typeof entry[1]?.text === "string";
}

function quote(replying) {
  if (!Number.isInteger(replying?.seq) || typeof replying.senderId !== "string") return null;
  return { seq: replying.seq, senderId: replying.senderId, preview: String(replying.preview ?? ""), deleted: replying.deleted === true };
}
