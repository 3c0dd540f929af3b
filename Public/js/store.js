// Client state and its rules. Views read it and re-render on `subscribe`.
//
// Outbox rules:
// 1. A message is stored locally first (localStorage, per user) with status "sending" and a clientId,
//    so it survives a reload and shows at once.
// 2. While connected it is sent, in the order written; unacknowledged sends are sent again after
//    every reconnect (the server's idempotency makes that safe). Within a conversation one entry
//    (send or action) is in flight at a time: the server commits the sends after a refused one
//    (docs/protocol.md "Pipelining"), so only waiting for each answer keeps the order written.
//    Conversations go in parallel; an entry that cannot go yet (files uploading, failed, an action
//    waiting for a seq) does not hold the ones after it.
// 3. A `sent` ack, our own message arriving on the stream (live or replayed), or a page of history
//    holding it (same clientId) confirms it: it leaves the outbox, and actions waiting for its seq go.
// 4. A refusal (validation, not found) marks it "failed" with the reason; retry() sends it again,
//    remove() drops it. Rate limits and server trouble are not refusals: it is retried after
//    RETRY_MS, and until then nothing after it in its conversation is sent (rule 2).
// 5. Pending messages show after the last confirmed one, in the order written.
// 6. Every save also goes to a copy in IndexedDB (outbox-copy.js), which a browser crash does not
//    lose as it can lose localStorage's last minute. At start, entries only the copy holds are put
//    back, in the order written: one already sent is answered `duplicate` (rule 2's idempotency), so
//    putting back too much is harmless and putting back too little is what this prevents.
// 7. A send is marked `sent` (saved with it) before it is first written to the socket: from then on
//    the server may hold it, answered or not, across reconnects and reloads. Such an entry is never
//    rewritten or cancelled here; an edit or delete of it is queued as an action waiting for its seq
//    (message-actions.js rule 4).
// 8. Tabs of one person share the saved outbox: each save merges what the others saved (outbox-merge.js)
//    rather than overwriting it, and a `storage` event for it takes their changes in at once (new
//    entries, edits, and removals, listed under `.gone` so a cancelled entry never comes back). Another
//    tab's save can be read here before its event comes: whichever finds a send gone (a save or the
//    event) reads the thread that showed it again, since this page may never see it on its stream. Every
//    tab sends what the outbox holds; the server's idempotency makes a send from two tabs one message.
//    Before changing an entry that was never sent, the tab reads the saved outbox again, so an entry
//    another tab has put on the wire (rule 7, saved first) is not rewritten.
//
// Receipt rules (cursors only move forward, so the furthest known always wins):
// 1. My cursors that cannot be sent (no connection) are kept and sent when the connection is back.
// 2. A summary read over HTTP may be older than the stream: it never moves a cursor or the last
//    message back, and receipts that came before it are applied to it.
// 3. In a group my ticks follow the group's aggregate (everyoneDeliveredSeq / everyoneReadSeq, moved
//    by `receiptSummary` events), never single members' cursors, which the server does not send.
//
// Message actions (react, edit, delete, hide) share the outbox with the sends, in order: see
// message-actions.js for their rules. A send may carry `replyToSeq`.
//
// A send with files waits in the outbox (`uploading`) until uploads.js has uploaded them all, then
// goes with its `attachments`; sends after it do not wait for it.
//
// Stream events of a type this client does not know still count as processed (their `pos` is kept),
// so a newer server never stalls the resume position of an older page.

import { directConversationId, lookAlikes } from "./format.js";
import { readOutboxCopy, saveOutboxCopy } from "./outbox-copy.js";
import { keptGone, mergeOutboxes, revisionOf } from "./outbox-merge.js";
import { GroupState } from "./group-state.js";
import { MessageActions } from "./message-actions.js";
import { NotificationSettings } from "./notifications.js";
import { applyProfile } from "./profiles.js";
import { Uploads } from "./uploads.js";

const TRANSIENT = new Set(["rate_limited", "unavailable", "storage_unavailable", "internal_error"]);
const RETRY_MS = 2000;  // a send refused for passing trouble goes again after this

export class ChatStore {
  constructor({ api, session }) {
    this.api = api;
    this.session = session;
    this.me = session.user.id;
    this.conversations = new Map();   // id → summary (server shape)
    this.threads = new Map();         // id → { messages: Map<seq, message>, hasOlder, loaded }
    this.presence = new Map();        // userId → { online, lastSeenAt }
    this.typing = new Map();          // conversationId → Map<userId, until>
    this.position = null;             // last processed stream position (this page's life)
    this.connection = "connecting";
    this.listState = "loading";
    this.listError = null;
    this.goneSeen = new Set();        // every removed clientId this page has seen (rule 8, loadGone)
    this.outbox = this.loadOutbox();
    this.saved = new Map();           // clientId → each entry as last saved or adopted here (rule 8)
    this.remember();
    this.onStorage = (event) => { if (event.key === this.outboxKey || event.key === this.goneKey) this.adoptStored(); };
    window.addEventListener("storage", this.onStorage);
    this.listeners = new Set();
    this.onIncoming = () => {};
    this.socket = null;
    this.inFlight = new Set();        // clientIds sent on this connection and not answered yet
    this.retryAt = new Map();         // clientId → when a send or action refused for passing trouble may go again
    this.deliveredTimers = new Map();
    this.unsentReceipts = new Map();  // conversationId → my cursors not yet sent (no connection then)
    this.earlyReceipts = new Map();   // conversationId → userId → cursors received before its summary
    this.groups = new GroupState(this);
    this.actions = new MessageActions(this);
    this.uploads = new Uploads(this);
    this.notifications = new NotificationSettings(this);
    this.onInvitation = () => {};
    this.onUpdated = () => {};        // (message) a messageUpdated event: an edit, a reaction, a delete for everyone
    this.onHidden = () => {};         // ({conversationId, seq}) a messageHidden event: deleted for me on another device
    this.onRead = () => {};           // (conversationId, seq) I read up to seq (here or elsewhere) or wrote there
    this.onProfile = () => {};        // (user) someone's profile (maybe mine) changed, already applied here (profiles.js)
  }

  // MARK: subscription

  subscribe(listener) { this.listeners.add(listener); return () => this.listeners.delete(listener); }

  changed() {
    this.directAlike = null;  // names may have changed: worked out again at the next look
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const listener of this.listeners) listener();
    });
  }

  // MARK: outbox persistence

  get outboxKey() { return `parley.outbox.${this.me}`; }

  get goneKey() { return `parley.outbox.${this.me}.gone`; }

  loadOutbox() {
    try { return JSON.parse(localStorage.getItem(this.outboxKey) ?? "[]"); } catch { return []; }
  }

  /**
   * The removed clientIds: the saved list and every one this page has seen. Another tab's save made
   * from a stale read (tabs' storage catches up asynchronously) can drop one from the saved list; it
   * stays gone here, and this page's next save lists it again.
   */
  loadGone() {
    let stored = [];
    try { stored = JSON.parse(localStorage.getItem(this.goneKey) ?? "[]"); } catch { /* unreadable: what this page saw stands */ }
    this.goneSeen = new Set([...this.goneSeen, ...(Array.isArray(stored) ? stored : [])]);
    return this.goneSeen;
  }

  /** Rule 8: what this tab changed since it last saved is counted (`rev`), what it removed is gone, then merged and saved. */
  saveOutbox() {
    const gone = this.loadGone();
    const present = new Set(this.outbox.map((entry) => entry.clientId));
    for (const clientId of this.saved.keys()) if (!present.has(clientId)) { gone.delete(clientId); gone.add(clientId); }
    for (const entry of this.outbox) if (this.saved.get(entry.clientId) !== revisionOf(entry)) entry.rev = (entry.rev ?? 0) + 1;
    this.mergeStored(gone);
    this.write(gone);
  }

  /**
   * Rule 8: takes in what the other tabs saved. What they removed (gone) was confirmed or cancelled
   * there, whichever of this tab's saves or storage events finds it first: its send is no longer in
   * flight here, and a thread that showed it is read again (reloadAfterOthersSent).
   */
  mergeStored(gone) {
    const dropped = this.outbox.filter((entry) => gone.has(entry.clientId));
    this.outbox = mergeOutboxes(this.outbox, this.loadOutbox(), gone);
    for (const entry of dropped) this.inFlight.delete(entry.clientId);
    this.reloadAfterOthersSent(dropped.filter((entry) => !entry.action));
  }

  write(gone) {
    const json = JSON.stringify(this.outbox);  // once, for both places
    this.goneSeen = new Set(keptGone(gone));
    localStorage.setItem(this.goneKey, JSON.stringify([...this.goneSeen]));
    localStorage.setItem(this.outboxKey, json);
    saveOutboxCopy(this.me, json);
    this.remember();
    this.uploads?.outboxChanged();  // files of a message that left the outbox stop uploading
  }

  /**
   * Sends another tab removed were confirmed there (or cancelled): this tab may never see them on its
   * stream (a page that was offline since it started resumes from the head), so the threads that
   * showed them are read again.
   */
  reloadAfterOthersSent(dropped) {
    for (const id of new Set(dropped.map((entry) => entry.conversationId))) {
      if (this.threads.get(id)?.loaded) this.loadThread(id);
    }
  }

  /** Signed out: other tabs' saves are no longer this page's business. */
  stop() {
    window.removeEventListener("storage", this.onStorage);
    this.notifications.stop();
  }

  remember() { this.saved = new Map(this.outbox.map((entry) => [entry.clientId, revisionOf(entry)])); }

  /** Rule 8: another tab saved: its entries, changes and removals are taken in (and saved back when this tab had more). */
  adoptStored() {
    const stored = localStorage.getItem(this.outboxKey) ?? "[]";
    const gone = this.loadGone();
    this.mergeStored(gone);
    if (JSON.stringify(this.outbox) !== stored) this.write(gone);
    else { this.remember(); this.uploads?.outboxChanged(); }
    this.changed();
    this.flush();
  }

  /** Rule 6: what the copy holds and localStorage lost comes back (call once, at start). */
  async recoverOutbox() {
    const known = new Set([...this.outbox.map((entry) => entry.clientId), ...this.loadGone()]);  // gone: removed in some tab (rule 8)
    const lost = (await readOutboxCopy(this.me)).filter((entry) => entry.clientId && !known.has(entry.clientId));
    if (!lost.length) return;
    // In the order written: createdAt, the copy's order among equals (sort is stable).
    this.outbox = [...this.outbox, ...lost].sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0));
    this.saveOutbox();
    this.changed();
    this.flush();
  }

  // MARK: snapshot

  async loadConversations() {
    this.listState = this.conversations.size ? this.listState : "loading";
    this.listError = null;
    this.changed();
    try {
      const { conversations } = await this.api.conversations();
      for (const summary of conversations) {
        this.addSummary(summary);
        // This device now has what arrived while it was away: delivered (not read), as a live message would be.
        const mine = this.me_(summary);
        if (mine && mine.deliveredSeq < summary.lastSeq && summary.lastMessage?.senderId !== this.me) this.markDelivered(summary.id, summary.lastSeq);
        for (const member of summary.members) {
          if (member.userId !== this.me && !this.presence.has(member.userId)) {
            this.presence.set(member.userId, { online: !!member.online, lastSeenAt: member.lastSeenAt });
          }
        }
      }
      this.listState = "ready";
    } catch (error) {
      // A list already shown stays as it is when reading it again fails (a reconnect's refresh):
      // the stream keeps it current, and the next connection reads it again.
      if (this.listState !== "ready") {
        this.listState = "error";
        this.listError = error.message;
      }
    }
    this.changed();
  }

  /** Reads the newest page, or (`older`) the page before the oldest loaded; resolves to how many came. */
  loadThread(id, { older = false } = {}) {
    const thread = this.thread(id);
    if (older && thread.loadingOlder) return thread.olderPage;  // the page on its way answers this call too
    if (older && (!thread.hasOlder || !thread.loaded)) return Promise.resolve(0);
    const page = this.readPage(id, thread, older);
    if (older) thread.olderPage = page;
    return page;
  }

  readPage(id, thread, older) {
    // A read of the newest page already on its way may have left before what this caller knows was
    // committed (another tab's send): it is read once more after that one.
    if (!older && thread.loading) { thread.readAgain = true; return Promise.resolve(0); }
    const page = this.readPageNow(id, thread, older);
    if (!older) thread.reading = page;
    return page;
  }

  async readPageNow(id, thread, older) {
    thread.loading = !older;
    const before = older ? Math.min(...thread.messages.keys()) : undefined;
    const generation = thread.generation;
    thread.loadingOlder = older;
    this.changed();
    try {
      const page = await this.api.history(id, before);
      if (thread.generation !== generation) return 0;  // the thread was re-seated meanwhile (loadAround)
      if (!older && (thread.hasNewer || thread.stale)) {
        // The newest page ends a detached window, or replaces what a thread read before I was a member again held.
        thread.stale = false;
        this.reseat(thread, page.messages, false);
      } else for (const message of page.messages) thread.messages.set(message.seq, message);
      this.confirmFrom(page.messages);
      thread.hasOlder = page.hasMore;
      thread.loaded = true;
      return page.messages.length;
    } catch (error) {
      if (error.status === 404) { thread.loaded = true; thread.hasOlder = false; }
      return 0;
    } finally {
      thread.loadingOlder = false;
      thread.loading = false;
      if (!older && thread.readAgain) {
        thread.readAgain = false;
        this.readPage(id, thread, false);
      }
      this.changed();
    }
  }

  // A thread not at the live end ("detached"): after a search result or a far jump, the thread holds
  // one contiguous run of history around a message, up to `loadedTo`, with `hasNewer` set. Live
  // messages still go into its map (so none is lost while pages are on their way), but the chat shows
  // only the run (seq ≤ loadedTo): a message after a gap never shows in the wrong place. Pages after
  // `loadedTo` extend the run; the page with `hasMore: false` reaches the live end and joins the live
  // messages that came meanwhile (the stream delivers every one of them, so the run is then complete).

  /** Replaces a thread's messages with `messages` (one run), keeping the live ones after it. */
  reseat(thread, messages, hasNewer, after = 0) {
    const map = new Map(messages.map((message) => [message.seq, message]));
    const end = messages.length ? messages[messages.length - 1].seq : after;
    for (const [seq, message] of thread.messages) if (seq > end && !map.has(seq)) map.set(seq, message);
    thread.messages = map;
    thread.hasNewer = hasNewer;
    thread.loadedTo = hasNewer ? end : null;
    thread.generation++;
  }

  /** Loads the history around `seq` (about 25 messages each side) in place of what was loaded. */
  loadAround(id, seq) {
    const thread = this.thread(id);
    thread.reading = this.loadAroundNow(thread, id, seq);
    return thread.reading;
  }

  async loadAroundNow(thread, id, seq) {
    const after = Math.max(0, seq - 26);
    thread.loading = true;
    this.changed();
    try {
      const page = await this.api.historyAfter(id, after, 50);
      this.reseat(thread, page.messages, page.hasMore, after);
      this.confirmFrom(page.messages);
      thread.hasOlder = after > 0;
      thread.loaded = true;
      return true;
    } catch {
      return false;
    } finally {
      thread.loading = false;
      this.changed();
    }
  }

  /** Extends a detached thread with the next page after `loadedTo`; resolves to how many came. */
  loadNewer(id) {
    const thread = this.thread(id);
    if (!thread.hasNewer) return Promise.resolve(0);
    if (thread.loadingNewer) return thread.newerPage;
    const after = thread.loadedTo;
    const generation = thread.generation;
    thread.loadingNewer = true;
    thread.newerPage = (async () => {
      try {
        const page = await this.api.historyAfter(id, after, 50);
        if (thread.generation !== generation) return 0;
        for (const message of page.messages) thread.messages.set(message.seq, message);
        this.confirmFrom(page.messages);
        thread.loadedTo = page.hasMore ? (page.messages[page.messages.length - 1]?.seq ?? after) : null;
        thread.hasNewer = page.hasMore;
        return page.messages.length;
      } catch {
        return 0;
      } finally {
        thread.loadingNewer = false;
        this.changed();
      }
    })();
    return thread.newerPage;
  }

  /**
   * Back to the live end: a detached thread is replaced by the newest page. A read already on its
   * way (a newest page, or history around a message) is waited for first, then the thread looked at again.
   */
  loadLatest(id) {
    const thread = this.thread(id);
    if (!thread.hasNewer) return Promise.resolve(0);
    if (thread.loading) return thread.reading.then(() => this.loadLatest(id));
    return this.readPage(id, thread, false);
  }

  /**
   * I am a member of the group again (re-added, or joined): what the thread holds was read before, so it
   * lacks what the new span shows (the gap, when history was shared) and the earlier span's edits made
   * meanwhile. It is read again as on a fresh page: the newest page replaces it (`stale`), now when the
   * chat is open (its render reads a thread not loaded), else when it is opened.
   */
  reloadThread(id) {
    const thread = this.threads.get(id);
    if (!thread) return;  // never read: its first read comes after the entry
    thread.stale = true;
    thread.loaded = false;
    thread.generation++;  // a page on its way was asked for before: it is dropped
  }

  /** Whether `seq` is inside the run of history the thread holds (so a jump needs no reload). */
  holds(id, seq) {
    const thread = this.threads.get(id);
    if (!thread?.loaded || !thread.messages.size) return false;
    if (thread.hasNewer && seq > thread.loadedTo) return false;
    const oldest = Math.min(...thread.messages.keys());
    return seq >= oldest || !thread.hasOlder;
  }

  thread(id) {
    if (!this.threads.has(id)) {
      this.threads.set(id, { messages: new Map(), hasOlder: true, loaded: false, loading: false, loadingOlder: false,
                             hasNewer: false, loadedTo: null, loadingNewer: false, generation: 0, reading: null });
    }
    return this.threads.get(id);
  }

  // MARK: reading

  other(summary) { return summary.members.find((m) => m.userId !== this.me); }

  isGroup(summaryOrId) {
    const id = typeof summaryOrId === "string" ? summaryOrId : summaryOrId?.id;
    return summaryOrId?.kind === "group" || Boolean(id?.startsWith("grp_"));
  }

  /** What a conversation is called: a group's title, or the other person's name. */
  titleOf(summary) {
    if (this.isGroup(summary)) return summary.title ?? "Group";
    return this.directName(this.other(summary)) ?? "?";
  }

  /**
   * The other person of a direct conversation (a member, or {userId, displayName, username}) by
   * name, with their @username when the person of another of my direct conversations has a name
   * that reads alike (format.js `lookAlikes`): two chats called "Ada Lovelace" are told apart.
   */
  directName(other) {
    if (!other) return null;
    if (!this.directAlike) {
      const people = [...this.conversations.values()].filter((s) => !this.isGroup(s)).map((s) => this.other(s)).filter(Boolean);
      this.directAlike = lookAlikes(people);
    }
    return this.directAlike.has(other.userId) && other.username ? `${other.displayName} (@${other.username})` : other.displayName;
  }

  /** A person's display name as this conversation knows it (or null until it is fetched). */
  nameOf(userId, summary) { return this.groups.nameOf(userId, summary); }

  me_(summary) { return summary.members.find((m) => m.userId === this.me); }

  /** A member's or user's profile photo (a path), or null: mine as I set it here, anyone's as the server sent it. */
  photoOf(person) {
    const userId = person?.userId ?? person?.id;
    if (!userId) return null;
    if (userId === this.me) return this.session.user.photo ?? null;
    return person.photo ?? this.groups.users.get(userId)?.photo ?? null;
  }

  sortedConversations() {
    return [...this.conversations.values()].sort((a, b) => b.lastActivityAt - a.lastActivityAt || (a.id < b.id ? 1 : -1));
  }

  /** The server's count, kept moving (GroupState): deleted, hidden and my own messages never count. */
  unread(summary) {
    return Math.max(0, summary.unreadCount ?? 0);
  }

  /** Sends still in the outbox for a conversation (queued actions are not messages of their own). */
  pendingFor(id) { return this.outbox.filter((p) => !p.action && p.conversationId === id); }

  /** sending / sent / delivered / read / failed for one of my messages. */
  statusOf(message, summary) {
    if (message.status) return message.status;
    if (this.isGroup(summary)) {
      if ((summary.everyoneReadSeq ?? 0) >= message.seq) return "read";
      if ((summary.everyoneDeliveredSeq ?? 0) >= message.seq) return "delivered";
      return "sent";
    }
    const other = summary && this.other(summary);
    if (!other) return "sent";
    if (other.readSeq >= message.seq) return "read";
    if (other.deliveredSeq >= message.seq) return "delivered";
    return "sent";
  }

  // MARK: sending

  /** Queues a send; with `files` (uploads.js), its clientId and attachments, held until they are uploaded. */
  send(conversationId, recipientId, text, replyToSeq = null, files = null) {
    const entry = {
      clientId: files?.clientId ?? crypto.randomUUID(), conversationId,
      recipientId: this.conversations.has(conversationId) || this.isGroup(conversationId) ? null : recipientId,
      text, createdAt: files?.createdAt ?? Date.now(), status: "sending", error: null,
    };
    if (replyToSeq) entry.replyToSeq = replyToSeq;
    if (files) Object.assign(entry, { attachments: files.attachments, uploading: true });
    this.outbox.push(entry);
    this.saveOutbox();
    this.changed();
    this.flush();
    return entry;
  }

  retry(clientId) {
    const entry = this.outbox.find((p) => p.clientId === clientId);
    if (!entry) return;
    entry.status = "sending";
    entry.error = null;
    this.saveOutbox();
    this.changed();
    this.flush();
  }

  remove(clientId) {
    this.outbox = this.outbox.filter((p) => p.clientId !== clientId && p.targetClientId !== clientId);
    this.saveOutbox();
    this.changed();
  }

  /**
   * Rule 2: sends the next waiting entry (message or action) of each conversation, oldest first, when
   * none of that conversation is in flight or waiting to be retried: the server commits a refused
   * send's successors anyway (docs/protocol.md "Pipelining"), so one at a time is what keeps the
   * order written. Conversations go in parallel. An entry that cannot go yet (files uploading, an
   * action waiting for its message's seq, a refused send) does not hold the ones after it.
   */
  flush() {
    if (!this.socket?.isOpen || this.connection !== "online") return;
    const busy = new Set(this.outbox.filter((p) => this.inFlight.has(p.clientId)).map((p) => p.conversationId));
    const now = Date.now();
    for (const entry of [...this.outbox]) {
      // A save below (rule 7) takes in other tabs' removals: an entry cancelled there is not sent.
      if (!this.outbox.includes(entry)) continue;
      if (busy.has(entry.conversationId)) continue;
      if ((this.retryAt.get(entry.clientId) ?? 0) > now) { busy.add(entry.conversationId); continue; }  // refused for now: the ones after it wait
      const frame = this.frameOf(entry);
      if (!frame) continue;
      busy.add(entry.conversationId);
      this.retryAt.delete(entry.clientId);
      this.putOnWire(entry, frame);
    }
  }

  /** The frame that sends an entry now, or null while it cannot go. */
  frameOf(entry) {
    if (entry.action) return this.actions.frameOf(entry);  // null: waits for its message's seq
    if (entry.status !== "sending" || entry.uploading) return null;  // files still uploading: uploads.js says when
    const frame = { type: "send", clientId: entry.clientId, text: entry.text };
    if (entry.attachments) {
      frame.attachments = entry.attachments.map(attachmentRequest);
      // A refusal of a frame the server cannot read comes back with its ref only: with the clientId as
      // ref it marks this send failed (Retry) instead of leaving it, and its conversation, in flight.
      frame.ref = entry.clientId;
    }
    if (!entry.recipientId || this.conversations.has(entry.conversationId)) frame.conversationId = entry.conversationId;
    else frame.recipientId = entry.recipientId;
    if (entry.replyToSeq) frame.replyToSeq = entry.replyToSeq;
    return frame;
  }

  /** Rule 7: a send is marked `sent` (and saved) before it is written: from then on the server may have it. */
  putOnWire(entry, frame) {
    if (!entry.action && !entry.sent) {
      entry.sent = true;
      this.saveOutbox();
      if (!this.outbox.includes(entry)) return;  // cancelled in another tab, as that save found
    }
    if (this.socket.send(frame)) this.inFlight.add(entry.clientId);
  }

  /** Rule 4: a refusal that is passing trouble: the entry (and its conversation) waits, then goes again. */
  retryLater(clientId) {
    this.retryAt.set(clientId, Date.now() + RETRY_MS);
    setTimeout(() => this.flush(), RETRY_MS);
  }

  confirm(message) {
    const before = this.outbox.length;
    this.outbox = this.outbox.filter((p) => p.clientId !== message.clientId);
    this.inFlight.delete(message.clientId);
    this.retryAt.delete(message.clientId);
    if (this.outbox.length !== before) this.saveOutbox();
    this.actions.sendConfirmed(message);
    this.flush();  // the next of its conversation
  }

  /** Rule 3: my messages in a page of history that are still in the outbox (or awaited by actions) were committed: confirmed. */
  confirmFrom(messages) {
    for (const message of messages) {
      if (message.senderId !== this.me || !message.clientId) continue;
      if (this.outbox.some((p) => !p.action && p.clientId === message.clientId) || this.actions.waitsFor(message.clientId)) this.confirm(message);
    }
  }

  // MARK: receipts and typing

  markDelivered(id, seq) {
    if (this.conversations.get(id)?.leftSeq) return;  // out of the group: it takes no receipts
    clearTimeout(this.deliveredTimers.get(id));
    this.deliveredTimers.set(id, setTimeout(() => {
      this.deliveredTimers.delete(id);
      this.sendReceipt(id, { deliveredSeq: seq });
    }, 150));
  }

  markRead(id, seq) {
    const summary = this.conversations.get(id);
    if (summary?.leftSeq) {
      // Out of the group, receipts are refused: what was read here is at least not shown unread here.
      if (summary.unreadCount || summary.mentionCount) { summary.unreadCount = 0; summary.mentionCount = 0; this.changed(); }
      return;
    }
    const mine = summary && this.me_(summary);
    if (!mine || mine.readSeq >= seq) return;
    mine.readSeq = seq;
    mine.deliveredSeq = Math.max(mine.deliveredSeq, seq);
    this.groups.recount(summary);
    this.onRead(id, seq);
    this.sendReceipt(id, { readSeq: seq });
    this.changed();
  }

  /** Sends my cursors now, or when the connection is back: the sender's ticks wait for them. */
  sendReceipt(id, cursors) {
    if (this.socket?.send({ type: "receipt", conversationId: id, ...cursors })) return;
    this.unsentReceipts.set(id, maxCursors(this.unsentReceipts.get(id), cursors));
  }

  flushReceipts() {
    const unsent = [...this.unsentReceipts];
    this.unsentReceipts.clear();
    for (const [id, cursors] of unsent) this.sendReceipt(id, cursors);
  }

  sendTyping(id, isTyping) {
    const summary = this.conversations.get(id);
    if (summary && !summary.leftSeq) this.socket?.send({ type: "typing", conversationId: id, isTyping });
  }

  /** Who is typing in a conversation now (user ids, in the order they started). */
  typingIn(id) {
    const now = Date.now();
    return [...(this.typing.get(id) ?? new Map())].filter(([, until]) => until > now).map(([userId]) => userId);
  }

  stopTypingOf(conversationId, userId) {
    const typists = this.typing.get(conversationId);
    typists?.delete(userId);
    if (typists?.size === 0) this.typing.delete(conversationId);
  }

  // MARK: the stream

  /** A contact's presence, or nothing while we are not connected: then we do not know it. */
  presenceOf(userId) {
    return this.connection === "online" ? this.presence.get(userId) : undefined;
  }

  setConnection(state) {
    this.connection = state;
    if (state !== "online") this.inFlight.clear();
    this.changed();
    if (state === "online") { this.flushReceipts(); this.flush(); }
  }

  handleFrame(frame) {
    switch (frame.type) {
      case "welcome":
        // A fresh page starts live from the head and takes a snapshot; a reconnect resumes, and takes
        // a snapshot too: names and photos changed meanwhile come in no event (profile frames are
        // ephemeral), and the snapshot never moves back what the replay moved (addSummary).
        if (this.position == null) this.position = frame.head;
        this.loadConversations();
        // Declines leave no event: the pending invitations are read again on every connection.
        this.groups.loadInvitations();
        // Nor do notification settings changed on another device.
        this.notifications.load();
        break;
      case "resync":
        this.position = frame.position;
        this.threads.clear();
        this.loadConversations();
        this.groups.loadInvitations();
        this.notifications.load();
        break;
      case "message": this.applyMessage(frame.message); this.advance(frame.pos); break;
      case "receipt": this.applyReceipt(frame.receipt); this.advance(frame.pos); break;
      case "conversation": this.applyConversation(frame.conversation); this.advance(frame.pos); break;
      case "receiptSummary": if (frame.summary) this.groups.applyAggregate(frame.summary); this.advance(frame.pos); break;
      case "invitation":
        if (frame.invitation) { this.groups.applyInvitation(frame.invitation, { live: true }); this.onInvitation(frame.invitation); }
        this.advance(frame.pos);
        break;
      // With "pos", the ack stands in for our own message's event in the stream.
      case "sent": this.applyMessage(frame.message); if (frame.pos != null) this.advance(frame.pos); break;
      case "messageUpdated": this.actions.applyEvent(frame.message); this.onUpdated(frame.message); this.advance(frame.pos); break;
      case "messageHidden": this.actions.applyHidden(frame.hidden); this.onHidden(frame.hidden); this.advance(frame.pos); break;
      case "acted": this.actions.acted(frame); if (frame.pos != null) this.advance(frame.pos); break;
      case "error":
        if (frame.clientId || frame.ref) this.applySendError(frame.clientId ?? frame.ref, frame.error);
        break;
      case "typing":
        if (frame.isTyping) {
          const typists = this.typing.get(frame.conversationId) ?? new Map();
          typists.delete(frame.userId);  // renewed: keeps its place at the end, with a new expiry
          typists.set(frame.userId, Date.now() + 6000);
          this.typing.set(frame.conversationId, typists);
          setTimeout(() => this.changed(), 6100);
        } else {
          this.stopTypingOf(frame.conversationId, frame.userId);
        }
        break;
      case "presence":
        this.presence.set(frame.userId, { online: frame.online, lastSeenAt: frame.lastSeenAt });
        break;
      case "profile": applyProfile(this, frame.user); break;  // ephemeral: no position
      default:
        // A stream event of a kind this page does not know: nothing to show, but it is processed.
        if (Number.isInteger(frame.pos)) this.advance(frame.pos);
    }
    this.changed();
  }

  advance(position) {
    if (!Number.isInteger(position)) return;  // a malformed frame moves nothing
    if (this.position == null || position > this.position) this.position = position;
  }

  applyConversation(info) {
    const group = this.isGroup(info);
    // A group's event has no roles or counts: the summary read right after has them.
    if (group) this.groups.refetch(info.id);
    if (this.conversations.has(info.id)) return;
    const summary = {
      id: info.id, kind: info.kind, createdAt: info.createdAt, lastSeq: 0, lastActivityAt: info.createdAt, unreadCount: 0,
      members: (info.members ?? []).map((u) => ({ userId: u.id, username: u.username, displayName: u.displayName, photo: u.photo, deliveredSeq: 0, readSeq: 0 })),
    };
    if (group) Object.assign(summary, { title: info.title, mentionCount: 0 });
    this.addSummary(summary);
  }

  applyMessage(message) {
    let summary = this.conversations.get(message.conversationId);
    if (!summary) {
      this.api.conversation(message.conversationId).then((s) => { this.addSummary(s); this.changed(); }).catch(() => {});
    } else if (message.seq > summary.lastSeq || !summary.lastMessage) {
      if (message.seq > summary.lastSeq) this.groups.countIncoming(summary, message);
      summary.lastSeq = Math.max(summary.lastSeq, message.seq);
      summary.lastMessage = message;
      summary.lastActivityAt = message.createdAt;
    }
    const thread = this.threads.get(message.conversationId);
    const isNew = thread ? !thread.messages.has(message.seq) : true;
    if (thread) thread.messages.set(message.seq, message);
    // A sender has read what they send (the server moves their cursors without a receipt event).
    const sender = summary?.members.find((m) => m.userId === message.senderId);
    if (sender && !message.entry) {
      sender.readSeq = Math.max(sender.readSeq, message.seq);
      sender.deliveredSeq = Math.max(sender.deliveredSeq, message.seq);
      if (message.senderId === this.me) this.groups.recount(summary);
    }
    if (message.entry) this.groups.applyEntry(message, summary);
    if (message.senderId === this.me) {
      this.confirm(message);
      this.onRead(message.conversationId, message.seq);  // writing there: what came before is seen
    } else {
      this.stopTypingOf(message.conversationId, message.senderId);
      this.markDelivered(message.conversationId, message.seq);
      if (isNew) this.onIncoming(message);
    }
  }

  applyReceipt(receipt) {
    if (receipt.userId === this.me && Number.isInteger(receipt.readSeq)) this.onRead(receipt.conversationId, receipt.readSeq);  // read on another device
    const summary = this.conversations.get(receipt.conversationId);
    if (!summary) {
      // The snapshot is still loading (and may have been read before this receipt): keep it for then.
      const early = this.earlyReceipts.get(receipt.conversationId) ?? new Map();
      early.set(receipt.userId, maxCursors(early.get(receipt.userId), { deliveredSeq: receipt.deliveredSeq ?? 0, readSeq: receipt.readSeq ?? 0 }));
      this.earlyReceipts.set(receipt.conversationId, early);
      return;
    }
    moveCursors(summary, receipt);
    if (receipt.userId === this.me) this.groups.recount(summary);  // read on another device
  }

  /**
   * Adds a summary read from the server or built from a `conversation` event. A summary read over
   * HTTP races the stream: it may be older than events already applied, so what is known only moves
   * forward (cursors, the last message), and receipts that came before it are applied to it.
   */
  addSummary(summary) {
    const known = this.conversations.get(summary.id);
    summary.members ??= [];
    if (this.isGroup(summary)) this.groups.merge(summary, known);
    else this.groups.mergeUnread(summary, known);
    if (known) {
      for (const member of known.members) moveCursors(summary, member);
      if (known.lastSeq > summary.lastSeq) {
        Object.assign(summary, { lastSeq: known.lastSeq, lastMessage: known.lastMessage, lastActivityAt: known.lastActivityAt });
      }
    }
    this.conversations.set(summary.id, summary);
    for (const [userId, cursors] of this.earlyReceipts.get(summary.id) ?? []) moveCursors(summary, { userId, ...cursors });
    this.earlyReceipts.delete(summary.id);
  }

  applySendError(clientId, error) {
    const entry = this.outbox.find((p) => p.clientId === clientId);
    if (entry?.action) { this.actions.refused(entry, error); return; }
    this.inFlight.delete(clientId);
    if (!entry) return;
    if (TRANSIENT.has(error?.code)) {
      this.retryLater(clientId);
      return;
    }
    entry.status = "failed";
    entry.error = error?.message ?? "Not sent.";
    entry.errorCode = error?.code ?? null;
    delete entry.refusal;  // sendableAgain keeps this refusal's words anew
    this.saveOutbox();
    this.flush();  // the next of its conversation
  }

  /**
   * I am in the group `id` (again): a send that failed because I was out of it would now go, so its
   * error no longer says I am not a member.
   */
  sendableAgain(id) {
    this.refusedForMembership(id, (entry) => {
      entry.refusal ??= entry.error;  // the server's words, for when I am out again
      return "Not sent. You are in this group again: Retry sends it.";
    });
  }

  /** I am out of the group `id` again: its sends refused for that say the server's reason again. */
  unsendableAgain(id) {
    this.refusedForMembership(id, (entry) => entry.refusal ?? entry.error);
  }

  /** Gives the failed sends of `id` that the server refused as a non-member's the error `words(entry)`. */
  refusedForMembership(id, words) {
    let changed = false;
    for (const entry of this.outbox) {
      if (entry.action || entry.conversationId !== id || entry.status !== "failed" || entry.errorCode !== "conversation_not_found") continue;
      const error = words(entry);
      changed ||= error !== entry.error;
      entry.error = error;
    }
    if (changed) this.saveOutbox();
  }

  /** The id a chat with `userId` has, whether or not it exists yet. */
  conversationWith(userId) { return directConversationId(this.me, userId); }
}

/** What a send says of one uploaded file (docs/protocol.md "Files"): the thumbnail as plain base64. */
function attachmentRequest(attachment) {
  const request = { uploadId: attachment.uploadId };
  const thumbnail = attachment.thumbnail?.slice(attachment.thumbnail.indexOf(",") + 1);
  if (thumbnail) request.thumbnail = thumbnail;
  if (attachment.placeholder) request.placeholder = attachment.placeholder;
  for (const field of ["width", "height", "durationMs"]) if (Number.isInteger(attachment[field])) request[field] = attachment[field];
  return request;
}

/** Moves a member's cursors in `summary` forward to `receipt`'s (`{userId, deliveredSeq?, readSeq?}`). */
function moveCursors(summary, receipt) {
  const member = summary.members.find((m) => m.userId === receipt.userId);
  if (!member) return;
  member.deliveredSeq = Math.max(member.deliveredSeq, receipt.deliveredSeq ?? 0);
  member.readSeq = Math.max(member.readSeq, receipt.readSeq ?? 0);
}

/** Each cursor of `a` and `b` at its furthest. */
function maxCursors(a = {}, b = {}) {
  const merged = { ...a };
  for (const [key, value] of Object.entries(b)) merged[key] = Math.max(merged[key] ?? 0, value);
  return merged;
}
