// Web Push on this device: whether the browser can, the permission, and the subscription the server
// pushes to. Rules:
// 1. Permission is asked only when the person turns notifications on (inside that click), never before.
// 2. A subscription belongs to one account (OWNER_KEY): signing out removes it from the server and
//    the browser, and one left by another account is dropped when the page starts.
// 3. While on, each start gives the server the subscription again (harmless: same endpoint), so an
//    endpoint the service worker renewed with no page open is known for sure.
// 4. The signed-in token is left where the service worker can read it (Cache Storage, SESSION_CACHE),
//    so on `pushsubscriptionchange` it can give the server the new subscription itself.

const OWNER_KEY = "parley.push.user";
export const SESSION_CACHE = "parley-session";  // sw.js reads it and keeps it across versions
const SESSION_URL = "/parley-session";

/** "supported", "insecure" (push needs https) or "unsupported". */
export function pushSupport() {
  if (!window.isSecureContext) return "insecure";
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) return "unsupported";
  return "supported";
}

export class PushControl {
  constructor(api, userId) {
    this.api = api;
    this.userId = userId;
    this.state = "checking";  // checking | insecure | unsupported | denied | off | on | busy
    this.listeners = new Set();
    this.stopped = false;
  }

  onChange(listener) { this.listeners.add(listener); }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    for (const listener of this.listeners) listener(state);
  }

  /** At start: drops another account's subscription, gives the server mine again, and follows the permission. */
  async start() {
    if (pushSupport() !== "supported") { this.setState(pushSupport()); return; }
    try {
      const status = await navigator.permissions?.query({ name: "notifications" });
      if (status) status.onchange = () => { if (!this.stopped) this.refresh(); };
    } catch { /* no Permissions API for notifications here */ }
    const subscription = await this.subscription();
    const owner = localStorage.getItem(OWNER_KEY);
    if (subscription && owner && owner !== this.userId) {
      await subscription.unsubscribe().catch(() => {});
      localStorage.removeItem(OWNER_KEY);
    } else if (subscription && owner === this.userId && Notification.permission === "granted") {
      await this.shareSession();
      this.api.addPushSubscription(subscription.toJSON()).catch(() => {});
    }
    await this.refresh();
  }

  async refresh() {
    const support = pushSupport();
    if (support !== "supported") { this.setState(support); return; }
    if (this.state === "busy") return;
    if (Notification.permission === "denied") { this.setState("denied"); return; }
    const subscription = await this.subscription();
    const mine = subscription && Notification.permission === "granted" && localStorage.getItem(OWNER_KEY) === this.userId;
    if (this.state !== "busy") this.setState(mine ? "on" : "off");
  }

  /** This page's service worker registration (it may still be installing on a first visit). */
  async registration() {
    return (await navigator.serviceWorker.getRegistration())
      ?? withTimeout(navigator.serviceWorker.ready, 10000, "This page's service worker did not start. Reload the page and try again.");
  }

  async subscription() {
    try {
      return (await this.registration())?.pushManager.getSubscription() ?? null;
    } catch {
      return null;
    }
  }

  /**
   * Turns notifications on. Call it straight from the click: the permission prompt needs the click's
   * user activation, so it is the first thing done.
   */
  async turnOn() {
    const asked = Notification.requestPermission();
    this.setState("busy");
    try {
      const permission = await asked;
      if (permission !== "granted") {
        if (permission === "denied") return;
        throw new PushError("Notifications were not allowed. Try again and choose Allow.");
      }
      const { vapidPublicKey } = await this.api.pushConfig();
      const key = base64UrlToBytes(vapidPublicKey);
      const registration = await this.registration();
      let subscription = await registration.pushManager.getSubscription();
      if (subscription && !sameBytes(subscription.options?.applicationServerKey, key)) {
        await subscription.unsubscribe().catch(() => {});  // made for another server key: it cannot be used
        subscription = null;
      }
      try {
        subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      } catch (error) {
        if (Notification.permission === "denied") return;
        throw new PushError(`This browser could not subscribe to notifications (${error?.message || "its push service did not answer"}).`);
      }
      await this.api.addPushSubscription(subscription.toJSON());
      localStorage.setItem(OWNER_KEY, this.userId);
      await this.shareSession();
    } finally {
      this.state = "checking";
      await this.refresh();
    }
  }

  /** Turns notifications off on this device: the server forgets the subscription, then the browser does. */
  async turnOff() {
    this.setState("busy");
    try {
      const subscription = await this.subscription();
      if (subscription) {
        try {
          await this.api.removePushSubscription(subscription.endpoint);
        } catch (error) {
          if (error.status !== 404) throw error;  // 404: the server had already forgotten it
        }
        await subscription.unsubscribe().catch(() => {});
      }
      localStorage.removeItem(OWNER_KEY);
      await caches.delete(SESSION_CACHE).catch(() => {});
    } finally {
      this.state = "checking";
      await this.refresh();
    }
  }

  /** Signing out: nothing of this account is pushed to this browser any more (best effort, bounded). */
  async forget() {
    this.stopped = true;
    if (pushSupport() !== "supported") return;
    await caches.delete(SESSION_CACHE).catch(() => {});
    if (localStorage.getItem(OWNER_KEY) !== this.userId) return;
    localStorage.removeItem(OWNER_KEY);
    const subscription = await withTimeout(this.subscription(), 3000).catch(() => null);
    if (!subscription) return;
    await withTimeout(this.api.removePushSubscription(subscription.endpoint), 3000).catch(() => {});
    await subscription.unsubscribe().catch(() => {});
  }

  /** The token for the service worker (it cannot read localStorage). */
  async shareSession() {
    const token = this.api.getToken();
    if (!token) return;
    try {
      const cache = await caches.open(SESSION_CACHE);
      await cache.put(SESSION_URL, new Response(JSON.stringify({ token }), { headers: { "Content-Type": "application/json" } }));
    } catch { /* no Cache Storage: a renewed subscription waits for the next start (rule 3) */ }
  }
}

/** Closes the notifications of a conversation (it is open on screen now). */
export async function dismissNotifications(conversationId) {
  if (pushSupport() !== "supported") return;
  try {
    const registration = await navigator.serviceWorker.getRegistration();
    for (const notification of await registration?.getNotifications({ tag: conversationId }) ?? []) notification.close();
  } catch { /* nothing to close */ }
}

export class PushError extends Error {}

export function base64UrlToBytes(text) {
  if (typeof text !== "string" || !text) throw new PushError("The server sent no push key.");
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(text.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
}

function sameBytes(buffer, bytes) {
  if (!buffer) return false;
  const other = new Uint8Array(buffer);
  return other.length === bytes.length && other.every((byte, index) => byte === bytes[index]);
}

function withTimeout(promise, ms, message = "Timed out.") {
  return Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new PushError(message)), ms))]);
}
