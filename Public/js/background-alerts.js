// Notifications the page shows itself while it is in the background. The server pushes only to a
// user with no live connection (docs/protocol.md "Notifications"), so a Parley tab left open behind
// others would otherwise tell nothing. Rules:
// 1. A message alerts when this page is in the background (hidden, or its window not focused: the
//    chat does not mark anything read then either), notifications are on in this browser (turned on,
//    permission granted), it is from someone else, not a group entry, and its conversation's setting
//    lets it: level all; mentions only when it mentions me; none, or muted, never (the server's rule).
// 2. It shows through the service worker's registration exactly as a push would (tag = the
//    conversation, data = the push payload, worded by the user's preview), so the worker's update,
//    withdraw and read handling, and a click, treat it the same. One at a time, in the order the
//    events came; a conversation's messages still waiting collapse into the newest (one deleted or
//    read meanwhile leaves, as in a push); `count` is how many alerted since its notification
//    closed. Another Parley tab in the background alerts too: a lock per conversation lets the
//    second see the first's notification and show nothing.
// 3. An edit of the message shown replaces it silently; a delete for everyone closes it; reading the
//    conversation up to it (here, on another device, or writing in it) closes it.
// 4. The page in front again (visible, or its window focused): it closes what it showed.
import { cutText, messagePreview } from "./format.js";
import { pushSupport } from "./push.js";

export const MAX_TEXT_CHARACTERS = 180;  // as the server cuts a push's text

export class BackgroundAlerts {
  constructor(store, push) {
    this.store = store;
    this.push = push;
    this.shown = new Map();    // conversationId → the payload this page shows there now
    this.alerted = new Map();  // conversationId → the newest seq alerted (a replay after a reconnect alerts once)
    this.waiting = new Map();  // conversationId → the messages still to show, oldest first
    this.queue = Promise.resolve();
    this.stopped = false;
    document.addEventListener("visibilitychange", this.onVisibility);
    window.addEventListener("focus", this.onFront);
  }

  /** Signing out: nothing more is shown, and what this page showed of the account closes. */
  stop() {
    this.stopped = true;
    document.removeEventListener("visibilitychange", this.onVisibility);
    window.removeEventListener("focus", this.onFront);
    this.waiting.clear();
    const shown = [...this.shown.keys()];
    this.enqueue(() => Promise.all(shown.map((id) => this.close(id))));
  }

  get inBackground() { return document.visibilityState !== "visible" || !document.hasFocus(); }

  /** Notifications are on in this browser for this account. */
  get on() {
    return this.permitted && this.push.state === "on" && this.store.notifications.available !== false;
  }

  get permitted() { return pushSupport() === "supported" && Notification.permission === "granted"; }

  /** A message from the stream, new to this page (the store's onIncoming). */
  message(message) {
    const id = message?.conversationId;
    if (this.stopped || !id || !Number.isInteger(message.seq)) return;
    if (message.entry || message.deletedAt || message.senderId === this.store.me) return;
    if (!this.on || !this.inBackground || !this.notifies(message)) return;
    if (message.seq <= (this.alerted.get(id) ?? 0) || message.seq <= this.readSeq(id)) return;
    this.alerted.set(id, message.seq);
    const waiting = this.waiting.get(id);
    if (waiting) waiting.push(message);
    else { this.waiting.set(id, [message]); this.enqueue(() => this.showWaiting(id)); }
  }

  /** A `messageUpdated` event: an edit, a reaction, or a delete for everyone. */
  updated(message) {
    const id = message?.conversationId;
    if (this.stopped || !id || !Number.isInteger(message.seq)) return;
    const waiting = this.waiting.get(id) ?? [];
    const index = waiting.findIndex((m) => m.seq === message.seq);
    if (index >= 0) {  // not shown yet: it shows as it is now, or (deleted) not at all
      if (message.deletedAt) waiting.splice(index, 1);
      else waiting[index] = message;
      return;
    }
    if (this.permitted) this.enqueue(() => this.update(id, message));
  }

  /** I have read `id` up to `seq` (here or elsewhere) or written in it. */
  read(id, seq) {
    if (this.stopped || !Number.isInteger(seq)) return;
    const waiting = this.waiting.get(id);
    if (waiting) waiting.splice(0, waiting.length, ...waiting.filter((m) => m.seq > seq));
    if (this.permitted) this.enqueue(() => this.close(id, seq));
  }

  onVisibility = () => {
    // Going to the background: settings changed on another device since the last connection apply.
    if (document.visibilityState === "hidden" && this.on) this.store.notifications.load();
    this.onFront();
  };

  onFront = () => {
    if (this.stopped || document.visibilityState !== "visible") return;
    this.waiting.clear();
    for (const [id, payload] of this.shown) this.enqueue(() => this.close(id, payload.seq));
  };

  // MARK: rules

  notifies(message) { return this.store.notifications.notifies(message); }

  readSeq(id) {
    const summary = this.store.conversations.get(id);
    return (summary && this.store.me_(summary)?.readSeq) || 0;
  }

  /** What a push would say (the server's wording, by the user's preview). */
  async wording(message, summary) {
    const preview = this.store.notifications.preview ?? "none";  // not read yet: the most private
    if (preview === "none") return { title: "Parley", body: "New message" };
    const sender = await this.nameOf(message.senderId, summary);
    const group = this.store.isGroup(summary ?? message.conversationId) ? (summary?.title ?? "Group") : null;
    if (preview === "sender") return group ? { title: group, body: `New message from ${sender}` } : { title: sender, body: "New message" };
    const text = cutText(messagePreview(message), MAX_TEXT_CHARACTERS);  // a photo: "📷 Photo" or its caption
    return group ? { title: group, body: `${sender}: ${text}` } : { title: sender, body: text };
  }

  async nameOf(userId, summary) {
    // A direct chat's person as the list names them: with their @username beside a look-alike.
    const other = summary && !this.store.isGroup(summary) ? this.store.other(summary) : null;
    const known = other?.userId === userId ? this.store.directName(other) : this.store.nameOf(userId, summary);
    if (known) return known;
    try {
      return (await this.store.api.user(userId)).displayName || "Someone";
    } catch {
      return "Someone";
    }
  }

  /** The user's total unread, as a push's `badge`. */
  badge() {
    let total = 0;
    for (const summary of this.store.conversations.values()) total += this.store.unread(summary);
    return total;
  }

  // MARK: the notifications

  enqueue(run) {
    this.queue = this.queue.then(run).catch(() => {});
  }

  async showWaiting(id) {
    const waiting = this.waiting.get(id);
    this.waiting.delete(id);
    if (!waiting?.length || this.stopped || !this.on || !this.inBackground) return;
    await (navigator.locks ? navigator.locks.request(`parley-alert:${id}`, () => this.showNow(id, waiting)) : this.showNow(id, waiting));
  }

  async showNow(id, waiting) {
    const message = waiting[waiting.length - 1];
    const registration = await navigator.serviceWorker.getRegistration();
    if (!registration) return;
    const current = (await registration.getNotifications({ tag: id })).find((n) => Number.isInteger(n.data?.seq))?.data;
    if (current?.seq >= message.seq) return;  // shown already (or a newer one is)
    const summary = this.store.conversations.get(id) ?? await this.store.api.conversation(id).catch(() => null);
    const wording = await this.wording(message, summary);
    if (this.stopped || message.seq <= this.readSeq(id) || !this.inBackground) return;  // read or back meanwhile
    const payload = { v: 1, kind: "message", conversationId: id, seq: message.seq, ...wording,
                      count: (Number.isInteger(current?.count) ? current.count : 0) + waiting.length, badge: this.badge(), url: `/#/c/${id}` };
    await show(registration, payload, true);
    this.shown.set(id, payload);
  }

  async update(id, message) {
    const registration = await navigator.serviceWorker.getRegistration();
    const listed = await registration?.getNotifications({ tag: id }) ?? [];
    const current = listed.find((n) => n.data?.seq === message.seq)?.data;
    if (!current) return;
    if (message.deletedAt) { await this.close(id, message.seq); return; }
    const summary = this.store.conversations.get(id) ?? await this.store.api.conversation(id).catch(() => null);
    const wording = await this.wording(message, summary);
    if (wording.title === current.title && wording.body === current.body) return;  // a reaction: nothing to tell
    const payload = { ...current, ...wording };
    await show(registration, payload, false);
    if (this.shown.has(id)) this.shown.set(id, payload);
  }

  /** Closes the conversation's notification when it shows a seq ≤ `upTo`. */
  async close(id, upTo = Infinity) {
    const registration = await navigator.serviceWorker.getRegistration();
    let left = false;
    for (const notification of await registration?.getNotifications({ tag: id }) ?? []) {
      if ((notification.data?.seq ?? 0) <= upTo) notification.close();
      else left = true;
    }
    if (!left) this.shown.delete(id);
  }
}

/** As the service worker shows a push (sw.js `show`): an alert, or (`alert` false) a silent replacement. */
function show(registration, payload, alert) {
  return registration.showNotification(payload.title, {
    body: payload.body,
    tag: payload.conversationId,
    data: payload,
    renotify: alert,
    silent: !alert,
    icon: "/favicon.svg",
  });
}
