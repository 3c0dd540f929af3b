// What message actions add to the chat store: react, edit, delete for everyone, delete for me
// (replies are sends with `replyToSeq`), as docs/protocol.md "Message actions" defines them.
//
// Rules:
// 1. An action joins the outbox with the sends, in the order done, with a clientId of its own, and
//    goes out as an `action` frame (ref = its clientId) while connected; after a reconnect it goes
//    again with the same clientId (the server applies it once). Kept in localStorage like sends.
// 2. Until it is answered it shows: views read messages through `current()`, which applies the
//    queued actions (new text, tombstone, my reaction moved, hidden).
// 3. `acted` confirms it (the message as it is now); a refusal drops it and says why (`onError`);
//    rate limits and server trouble are not refusals: it is sent again later, and like a send it
//    holds the entries after it in its conversation meanwhile (store.js outbox rule 2).
// 4. A message still in the outbox and never put on the wire (or refused since): an edit changes what
//    will be sent, a delete cancels it. Once put on the wire (its `sent` flag, kept with the outbox)
//    the server may hold it even when no answer came (the connection dropped, the page reloaded): an
//    edit or delete is then queued as an action that waits for the message's seq (`targetClientId`),
//    learnt from the `sent` answer to its resend, its own event in the replay or a page of history
//    (store.js outbox rule 3), and then goes as a real action; meanwhile rule 2 shows it. Reacting
//    and replying are offered only once a message has its seq.
// 5. `messageUpdated` replaces the message where it is loaded, in the list's preview when it is the
//    last, and in the quotes of the replies to it; `messageHidden` takes it out of view (and out of
//    the preview, which the server then reads again).

import { characterCount, isolate, messagePreview } from "./format.js";

/** The server's default windows (`--edit-window`, `--delete-window`): past them it refuses, and says so. */
export const EDIT_WINDOW_MS = 48 * 3600 * 1000;
export const DELETE_WINDOW_MS = 48 * 3600 * 1000;
export const QUICK_REACTIONS = ["👍", "❤️", "😂", "😮", "😢", "🙏"];
export const DELETED_TEXT = "This message was deleted";

const TRANSIENT = new Set(["rate_limited", "unavailable", "storage_unavailable", "internal_error"]);
const PREVIEW_CHARACTERS = 120;

export class MessageActions {
  constructor(store) {
    this.store = store;
    this.onError = () => {};  // (text) → tells the person an action was refused
    this.updates = new Map();   // "conversationId:seq" → how many messageUpdated events came for it
    this.marks = new Map();     // action clientId → that count when the action was sent
  }

  // MARK: reading

  /** A message as it will be once my queued actions are applied, or null when I hid it. */
  current(message) {
    let result = message;
    for (const entry of this.store.outbox) {
      if (!entry.action || !targets(entry, message, this.store.me)) continue;
      result = applyLocally(result, entry, this.store.me);
      if (!result) return null;
    }
    return result;
  }

  /** The loaded message a reference ({conversationId, seq, clientId}) names now, as it will be. */
  resolve(ref) {
    const store = this.store;
    const thread = store.threads.get(ref.conversationId);
    let message = ref.seq ? thread?.messages.get(ref.seq) : null;
    if (!message && ref.clientId) {
      message = [...(thread?.messages.values() ?? [])].find((m) => m.clientId === ref.clientId && m.senderId === store.me);
    }
    if (!message && ref.clientId) {
      const pending = store.outbox.find((p) => !p.action && p.clientId === ref.clientId);
      if (pending) message = pendingMessage(pending, store.me);
    }
    return message ? this.current(message) : null;
  }

  /** My reaction on a message, or null. */
  myReaction(message) { return message?.reactions?.find((r) => r.mine)?.emoji ?? null; }

  canEdit(message) {
    if (!message || message.entry || message.deletedAt || message.senderId !== this.store.me) return false;
    if (!message.seq) return true;  // still in the outbox: the new text is what will be sent
    return !this.leftGroup(message) && Date.now() - message.createdAt < EDIT_WINDOW_MS;
  }

  /** My own message within the window, or anyone's when I manage the group. */
  canDeleteForEveryone(message) {
    if (!message || message.entry || message.deletedAt || this.leftGroup(message)) return false;
    if (message.senderId === this.store.me) return !message.seq || Date.now() - message.createdAt < DELETE_WINDOW_MS;
    const summary = this.store.conversations.get(message.conversationId);
    const role = summary && this.store.isGroup(summary) ? this.store.me_(summary)?.role : null;
    return role === "admin" || role === "owner";
  }

  /** Reacting and replying need a seq, a message that is not deleted, and my being in the conversation. */
  canReact(message) { return Boolean(message?.seq) && !message.deletedAt && !message.entry && !this.leftGroup(message); }

  leftGroup(message) { return Boolean(this.store.conversations.get(message.conversationId)?.leftSeq); }

  // MARK: acting

  /** Sets my reaction to `emoji`, or takes it back when it is already mine. */
  toggleReaction(message, emoji) {
    this.enqueue(message, { action: "react", emoji: this.myReaction(message) === emoji ? undefined : emoji });
  }

  edit(message, text) {
    if (text === message.text) return;
    this.enqueue(message, { action: "edit", text });
  }

  deleteForEveryone(message) { this.enqueue(message, { action: "delete" }); }

  hide(message) { this.enqueue(message, { action: "hide" }); }

  enqueue(message, fields) {
    const store = this.store;
    if (!message.seq) {
      store.adoptStored();  // another tab may have sent or removed it meanwhile (store.js outbox rule 8)
      const pending = store.outbox.find((p) => !p.action && p.clientId === message.clientId);
      if (!pending) {
        // Confirmed meanwhile (here, or in another tab): act on it as the server has it, or, until its
        // seq is known here, queue the action for it (a page of history confirms it: store.js rule 3).
        const sent = this.sentCopy(message);
        if (sent) return this.enqueue(sent, fields);
        if (fields.action !== "edit" && fields.action !== "delete") return;
      } else if (!mayBeCommitted(pending)) {
        // Never put on the wire (or refused): change what will be sent, or send nothing.
        if (fields.action === "edit") {
          pending.text = fields.text;
          // Edits queued while it might have been committed would undo this one once it is.
          store.outbox = store.outbox.filter((p) => !(p.action === "edit" && p.targetClientId === pending.clientId));
        }
        else if (fields.action === "delete") store.outbox = store.outbox.filter((p) => p !== pending && p.targetClientId !== pending.clientId);
        else return;
        store.saveOutbox();
        store.changed();
        return;
      } else if (fields.action !== "edit" && fields.action !== "delete") return;
    }
    const entry = {
      action: fields.action, clientId: crypto.randomUUID(), conversationId: message.conversationId, seq: message.seq ?? null,
      createdAt: Date.now(),
    };
    if (!message.seq) entry.targetClientId = message.clientId;  // maybe committed, not answered yet: waits for its seq
    if (fields.emoji) entry.emoji = fields.emoji;
    if (fields.text !== undefined) entry.text = fields.text;
    store.outbox.push(entry);
    store.saveOutbox();
    store.changed();
    store.flush();
  }

  /** My message with `message`'s clientId as loaded from the server (with its seq), or null. */
  sentCopy(message) {
    const thread = this.store.threads.get(message.conversationId);
    return [...(thread?.messages.values() ?? [])].find((m) => m.clientId === message.clientId && m.senderId === this.store.me) ?? null;
  }

  /** Whether a queued action waits for the seq of my message with this clientId. */
  waitsFor(clientId) {
    return this.store.outbox.some((p) => p.action && p.seq == null && p.targetClientId === clientId);
  }

  /** The frame that sends a queued action, or null while it waits for its message's seq. */
  frameOf(entry) {
    if (entry.seq == null) return null;
    this.marks.set(entry.clientId, this.updates.get(`${entry.conversationId}:${entry.seq}`) ?? 0);
    const frame = { type: "action", ref: entry.clientId, clientId: entry.clientId, conversationId: entry.conversationId, seq: entry.seq, kind: entry.action };
    if (entry.emoji) frame.emoji = entry.emoji;
    if (entry.text !== undefined) frame.text = entry.text;
    return frame;
  }

  /** A send was confirmed: actions that waited for its seq can go. */
  sendConfirmed(message) {
    let changed = false;
    for (const entry of this.store.outbox) {
      if (entry.action && entry.seq == null && entry.targetClientId === message.clientId) {
        entry.seq = message.seq;
        entry.conversationId = message.conversationId;
        changed = true;
      }
    }
    if (changed) { this.store.saveOutbox(); queueMicrotask(() => this.store.flush()); }
  }

  // MARK: answers and events

  /**
   * The answer to one of my actions. The stream (in order) is what says how a message is now: the
   * answer's copy is applied only when no `messageUpdated` for the message came since the action was
   * sent (a retry answered as a duplicate, say), so an answer overtaken by later events is not shown.
   */
  acted(frame) {
    const store = this.store;
    const entry = store.outbox.find((p) => p.action && p.clientId === frame.ref);
    if (entry) {
      store.outbox = store.outbox.filter((p) => p !== entry);
      store.inFlight.delete(entry.clientId);
      store.saveOutbox();
      store.flush();  // the next of its conversation
    }
    const mark = this.marks.get(frame.ref);
    this.marks.delete(frame.ref);
    if (entry?.action === "hide") { this.applyHidden({ conversationId: entry.conversationId, seq: entry.seq }); return; }
    const message = frame.message;
    if (!message) return;
    const seen = this.updates.get(`${message.conversationId}:${message.seq}`) ?? 0;
    if (mark === undefined || seen <= mark || frame.pos != null) this.applyUpdated(message);
  }

  /** An `error` answering a queued action: retried when it is passing trouble, else dropped and told. */
  refused(entry, error) {
    const store = this.store;
    store.inFlight.delete(entry.clientId);
    if (TRANSIENT.has(error?.code)) {
      store.retryLater(entry.clientId);
      return;
    }
    store.outbox = store.outbox.filter((p) => p !== entry);
    store.saveOutbox();
    store.flush();  // the next of its conversation
    // Which action, on which message, where: one done offline may be refused long after, elsewhere.
    this.onError(`Not done: ${this.describe(entry)}. ${error?.message ?? "That could not be done."}`, error?.code);
    // The message may have changed meanwhile (deleted, say): the server's version is read again.
    if (entry.seq != null && error?.code !== "message_not_found") this.refresh(entry.conversationId, entry.seq);
  }

  /** "your edit of “Tea or coffee?” in Book club", as the terminal words it. */
  describe(entry) {
    const what = {
      react: entry.emoji ? `your ${entry.emoji} on` : "clearing your reaction to", edit: "your edit of",
      delete: "deleting for everyone", hide: "deleting for you",
    }[entry.action] ?? "your action on";
    const message = this.store.threads.get(entry.conversationId)?.messages.get(entry.seq);
    const text = message && (message.deletedAt ? "This message was deleted" : firstLine(messagePreview(message).split(/[\u2028\u2029]/)[0]));
    const summary = this.store.conversations.get(entry.conversationId);
    const where = summary ? ` in ${isolate(this.store.titleOf(summary))}` : "";
    return `${what} ${text ? `“${text}”` : "a message"}${where}`;
  }

  /** Reads the page of history that holds a message, to show it as it is now. */
  refresh(conversationId, seq) {
    const thread = this.store.threads.get(conversationId);
    if (!thread?.messages.has(seq)) return;
    this.store.api.history(conversationId, seq + 1).then((page) => {
      const fresh = page.messages.find((m) => m.seq === seq);
      if (fresh) this.applyUpdated(fresh);
      this.store.changed();
    }).catch(() => {});
  }

  /** A `messageUpdated` event: counted (see `acted`), then applied. */
  applyEvent(message) {
    if (!message?.conversationId || !Number.isInteger(message.seq)) return;
    const key = `${message.conversationId}:${message.seq}`;
    this.updates.set(key, (this.updates.get(key) ?? 0) + 1);
    this.applyUpdated(message);
  }

  /** A message changed (reaction, edit, delete for everyone): it as it is now, wherever it shows. */
  applyUpdated(message) {
    const store = this.store;
    if (!message?.conversationId || !Number.isInteger(message.seq)) return;
    const thread = store.threads.get(message.conversationId);
    if (thread?.messages.has(message.seq)) thread.messages.set(message.seq, message);
    // Replies quote it as it is now: never text that was edited away.
    const quote = quoteOf(message);
    for (const other of thread?.messages.values() ?? []) {
      if (other.replyTo?.seq === message.seq && !sameQuote(other.replyTo, quote)) {
        thread.messages.set(other.seq, { ...other, replyTo: quote });
      }
    }
    const summary = store.conversations.get(message.conversationId);
    if (!summary) return;
    if (summary.lastMessage?.seq === message.seq) summary.lastMessage = message;
    // Deleted messages do not count as unread.
    if (message.deletedAt && message.seq > (store.me_(summary)?.readSeq ?? 0)) store.groups.recount(summary);
  }

  /** I deleted a message for myself (here or on another device): it leaves my view and my preview. */
  applyHidden(hidden) {
    const store = this.store;
    if (!hidden?.conversationId || !Number.isInteger(hidden.seq)) return;
    const thread = store.threads.get(hidden.conversationId);
    if (thread) {
      thread.messages.delete(hidden.seq);
      (thread.hidden ??= new Set()).add(hidden.seq);
    }
    const summary = store.conversations.get(hidden.conversationId);
    if (!summary) return;
    if (summary.lastMessage?.seq === hidden.seq) {
      // The preview shows the newest message I have not hidden: the newest loaded one now, the server's after.
      const left = [...(thread?.messages.values() ?? [])].filter((m) => m.seq < hidden.seq);
      summary.lastMessage = left.reduce((a, m) => (!a || m.seq > a.seq ? m : a), null) ?? undefined;
      store.api.conversation(hidden.conversationId).then((fresh) => { store.addSummary(fresh); store.changed(); }).catch(() => {});
    }
    if (hidden.seq > (store.me_(summary)?.readSeq ?? 0)) store.groups.recount(summary);
  }
}

/**
 * Whether the server may hold a send (rule 4): it was put on the wire (`sent`, kept with the outbox, so
 * a reload or a lost connection does not forget it) and not refused since. Only one it cannot hold may
 * be changed or cancelled in the outbox: one it holds would answer a resend as a duplicate of the old text.
 */
function mayBeCommitted(pending) {
  return Boolean(pending.sent) && pending.status !== "failed";
}

/** Whether a queued action is about `message`. */
function targets(entry, message, me) {
  if (entry.targetClientId && entry.targetClientId === message.clientId && message.senderId === me) return true;
  return entry.seq != null && entry.seq === message.seq && entry.conversationId === message.conversationId;
}

/** A message with one queued action applied (null: hidden). */
function applyLocally(message, entry, me) {
  switch (entry.action) {
    case "hide": return null;
    case "delete": return { ...message, text: "", deletedAt: message.deletedAt ?? entry.createdAt, reactions: undefined, attachments: undefined };
    case "edit": return message.deletedAt ? message : { ...message, text: entry.text, editedAt: entry.createdAt };
    case "react": {
      if (message.deletedAt) return message;
      let reactions = (message.reactions ?? []).map((r) => (r.mine
        ? { ...r, count: r.count - 1, mine: false, userIds: (r.userIds ?? []).filter((id) => id !== me) }
        : r)).filter((r) => r.count > 0);
      if (entry.emoji) {
        const existing = reactions.find((r) => r.emoji === entry.emoji);
        if (existing) {
          reactions = reactions.map((r) => (r === existing ? { ...r, count: r.count + 1, mine: true, userIds: [...(r.userIds ?? []), me] } : r));
        } else {
          reactions = [...reactions, { emoji: entry.emoji, count: 1, mine: true, userIds: [me] }];
        }
      }
      return { ...message, reactions: reactions.length ? reactions : undefined };
    }
    default: return message;
  }
}

/** A send still in the outbox, shaped as a message. */
export function pendingMessage(pending, me) {
  return {
    id: pending.clientId, clientId: pending.clientId, conversationId: pending.conversationId, senderId: me, text: pending.text,
    createdAt: pending.createdAt, status: pending.status, error: pending.error, replyToSeq: pending.replyToSeq,
    attachments: pending.attachments, uploading: pending.uploading,
  };
}

/** What a reply shows of `message`: its first line now, or that it was deleted. */
export function quoteOf(message) {
  const deleted = Boolean(message.deletedAt);
  return { seq: message.seq, senderId: message.senderId, preview: deleted ? "" : firstLine(message.text), deleted };
}

function firstLine(text) {
  const line = (text ?? "").split("\n")[0];
  if (characterCount(line) <= PREVIEW_CHARACTERS) return line;
  const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return [...segmenter.segment(line)].slice(0, PREVIEW_CHARACTERS).map((s) => s.segment).join("");
}

function sameQuote(a, b) {
  return a.seq === b.seq && a.senderId === b.senderId && a.preview === b.preview && a.deleted === b.deleted;
}
