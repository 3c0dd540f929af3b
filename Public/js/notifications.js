// What this account's notifications do (docs: GET/PUT /v1/notifications): what a notification shows
// (the preview: full, sender or none), and per conversation which messages notify (all, mentions,
// none) and until when it is muted. Read on every connection (another device may have changed it),
// changed through the REST API; changes are sent one after another, so the last one chosen wins.
// The server tells no stream of a change: my other tabs hear of one here (a BroadcastChannel) and
// read the settings again at once; other devices read them on their next connection, on focus, and
// when the page goes to the background (background-alerts.js).
import { clockTime } from "./format.js";

/** mutedUntil of "Mute always" (9999-12-31). */
export const MUTED_ALWAYS = 253402300799000;
const PREVIEWS = new Set(["full", "sender", "none"]);
const LEVELS = new Set(["all", "mentions", "none"]);
const DEFAULT = Object.freeze({ level: "all", mutedUntil: null });

export class NotificationSettings {
  constructor(store) {
    this.store = store;
    this.preview = null;             // unknown until read
    this.conversations = new Map();  // conversationId → { level, mutedUntil } (only those not at the default)
    this.available = null;           // false when the server has no notifications (404)
    this.changes = 0;                // changes started, so a read that raced one does not undo it
    this.queue = Promise.resolve();
    this.expiryTimer = null;
    this.channel = typeof BroadcastChannel === "function" ? new BroadcastChannel(`parley.notifications.${store.me}`) : null;
    if (this.channel) this.channel.onmessage = () => this.load();
    this.onFocus = () => this.load();
    window.addEventListener("focus", this.onFocus);
  }

  /** Signed out: other tabs' changes are no longer this page's business. */
  stop() {
    this.channel?.close();
    window.removeEventListener("focus", this.onFocus);
  }

  /** Another tab of mine reads the settings again (what changed there is on the server now). */
  tellOtherTabs() {
    this.channel?.postMessage("changed");
  }

  async load() {
    const started = this.changes;
    try {
      const settings = await this.store.api.notificationSettings();
      if (this.changes === started) this.apply(settings);
    } catch (error) {
      if (error.status === 404) { this.available = false; this.store.changed(); }
    }
  }

  apply(settings) {
    if (PREVIEWS.has(settings?.preview)) this.preview = settings.preview;
    if (Array.isArray(settings?.conversations)) {
      this.conversations = new Map(settings.conversations.filter((entry) => typeof entry?.conversationId === "string")
        .map((entry) => [entry.conversationId, setting(entry)]));
    }
    this.available = true;
    this.scheduleExpiry();
    this.store.changed();
  }

  of(id) { return this.conversations.get(id) ?? DEFAULT; }

  isMuted(id, now = Date.now()) {
    const until = this.of(id).mutedUntil;
    return until != null && until > now;
  }

  /** "muted", "off" (notify about nothing) or null: whether the list marks the conversation as quiet. */
  quiet(id) {
    if (this.isMuted(id)) return "muted";
    return this.of(id).level === "none" ? "off" : null;
  }

  /**
   * Whether `message` may interrupt me (the server's rule for pushes): level all; mentions only when
   * it mentions me; none, or muted, never.
   */
  notifies(message) {
    if (this.isMuted(message.conversationId)) return false;
    const { level } = this.of(message.conversationId);
    if (level === "none") return false;
    return level !== "mentions" || (Array.isArray(message.mentions) && message.mentions.includes(this.store.me));
  }

  setPreview(preview) {
    return this.enqueue(async () => { this.apply(await this.store.api.setNotificationPreview(preview)); this.tellOtherTabs(); });
  }

  /** `change`: `{level}` and/or `{mute: "8h"|"1w"|"always"|"off"}`. */
  change(id, change) {
    return this.enqueue(async () => {
      const result = await this.store.api.setConversationNotifications(id, change);
      const value = setting(result);
      if (value.level === "all" && value.mutedUntil == null) this.conversations.delete(id);
      else this.conversations.set(id, value);
      this.scheduleExpiry();
      this.store.changed();
      this.tellOtherTabs();
      return value;
    });
  }

  enqueue(run) {
    this.changes++;
    const next = this.queue.then(run);
    this.queue = next.catch(() => {});
    return next;
  }

  /** A mute that ends while the page is open: the list and header show it end. */
  scheduleExpiry() {
    clearTimeout(this.expiryTimer);
    const now = Date.now();
    const ends = [...this.conversations.values()].map((value) => value.mutedUntil).filter((until) => until != null && until > now);
    if (!ends.length) return;
    const delay = Math.min(...ends) - now + 50;
    if (delay > 2 ** 31 - 1) return;  // beyond what a timer can wait (a page is not open that long)
    this.expiryTimer = setTimeout(() => { this.scheduleExpiry(); this.store.changed(); }, delay);
  }
}

function setting(entry) {
  const until = Number.isFinite(entry?.mutedUntil) ? entry.mutedUntil : null;
  return { level: LEVELS.has(entry?.level) ? entry.level : "all", mutedUntil: until };
}

/** "Muted until 18:30", "…until tomorrow, 09:15", "…until you unmute it", or "Not muted". */
export function muteText(until, now = Date.now()) {
  if (until == null || until <= now) return "Not muted";
  if (until >= MUTED_ALWAYS) return "Muted until you unmute it";
  const end = new Date(until);
  const today = new Date(now);
  const days = Math.round((new Date(end.getFullYear(), end.getMonth(), end.getDate()) - new Date(today.getFullYear(), today.getMonth(), today.getDate())) / 86400000);
  if (days === 0) return `Muted until ${clockTime(until)}`;
  if (days === 1) return `Muted until tomorrow, ${clockTime(until)}`;
  const day = end.toLocaleDateString([], days < 7 ? { weekday: "long" } : { month: "short", day: "numeric" });
  return `Muted until ${day}, ${clockTime(until)}`;
}

/** The crossed-out bell of a quiet conversation, named for those who cannot see it. */
export function quietIcon(label) {
  const ns = "http://www.w3.org/2000/svg";
  const icon = document.createElementNS(ns, "svg");
  for (const [name, value] of [["viewBox", "0 0 24 24"], ["width", "14"], ["height", "14"], ["role", "img"], ["aria-label", label], ["class", "quiet-icon"]]) {
    icon.setAttribute(name, value);
  }
  const title = document.createElementNS(ns, "title");
  title.textContent = label;
  icon.append(title);
  for (const [d, extra] of [
    ["M12 3a6 6 0 0 0-6 6v3.6L4.3 15.5A1 1 0 0 0 5.2 17h13.6a1 1 0 0 0 .9-1.5L18 12.6V9a6 6 0 0 0-6-6Z", { "stroke-linejoin": "round" }],
    ["M9.5 19.5a2.6 2.6 0 0 0 5 0", { "stroke-linecap": "round" }],
    ["M4 3.5 20 20.5", { "stroke-linecap": "round" }],
  ]) {
    const path = document.createElementNS(ns, "path");
    path.setAttribute("d", d);
    path.setAttribute("fill", "none");
    path.setAttribute("stroke", "currentColor");
    path.setAttribute("stroke-width", "2.2");
    for (const [name, value] of Object.entries(extra)) path.setAttribute(name, value);
    icon.append(path);
  }
  return icon;
}
