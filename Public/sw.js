// Keeps the app shell available offline, so the client opens (with its outbox) while the server is
// unreachable. Network first: a reachable server always serves the current files; the API is never cached.
// Also shows push notifications (docs: the push payload), one per conversation (tag = its id).
const CACHE = "parley-shell-v17";
const SESSION_CACHE = "parley-session";  // the signed-in token, left here by js/push.js (for pushsubscriptionchange)
const SHELL = ["/", "/app.css", "/favicon.svg", "/js/app.js", "/js/api.js", "/js/background-alerts.js", "/js/chat-header.js", "/js/chat-view.js", "/js/composer-mode.js", "/js/dialog.js",
  "/js/dom.js", "/js/emoji-picker.js", "/js/entries.js", "/js/format.js", "/js/group-panel.js", "/js/group-state.js", "/js/list-view.js",
  "/js/mentions.js", "/js/message-actions.js", "/js/message-info.js", "/js/message-menu.js", "/js/message-row.js", "/js/new-group.js", "/js/notification-dialogs.js",
  "/js/notifications.js", "/js/people-picker.js", "/js/push.js", "/js/search.js", "/js/socket.js", "/js/store.js",
  "/js/attachments-view.js", "/js/blurhash.js", "/js/file-links.js", "/js/image-prep.js", "/js/profile-photo.js", "/js/display-name.js", "/js/drafts.js", "/js/profiles.js", "/js/tray.js", "/js/tus.js",
  "/js/upload-db.js", "/js/uploads.js", "/js/viewer.js", "/js/idb.js", "/js/outbox-copy.js", "/js/outbox-merge.js"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((key) => key !== CACHE && key !== SESSION_CACHE).map((key) => caches.delete(key))))
    .then(() => self.clients.claim()));
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== self.location.origin || url.pathname.startsWith("/v1/")) return;
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          caches.open(CACHE).then((cache) => cache.put(event.request, copy));
        }
        return response;
      })
      .catch(() => caches.match(event.request, { ignoreSearch: true })
        .then((cached) => cached ?? (event.request.mode === "navigate" ? caches.match("/") : Response.error()))),
  );
});

// MARK: push
//
// message  → show it (title and body as the server wrote them), unless that conversation's notification
//            already shows this message or a newer one (a resend: delivery is at least once);
// update   → the notification showing that message gets the new text, silently;
// withdraw → the notification showing that message closes;
// read     → the conversation's notification closes when what it shows has been read elsewhere.
// A push that cannot be read still shows something (every push must, userVisibleOnly).
// Pushes may cross on the way (a push service promises no order, and Firefox decrypts a burst of them
// concurrently): an update, withdraw or read that comes before its message is kept (`ahead`), and the
// message then shows with its edited text, or not at all. An update never shows a notification itself:
// a notification the user dismissed does not come back because its message was edited.

const KINDS = new Set(["message", "update", "withdraw", "read"]);

function readPayload(data) {
  try {
    const payload = data?.json();
    if (payload && typeof payload === "object" && KINDS.has(payload.kind) && typeof payload.conversationId === "string"
        && payload.conversationId && Number.isInteger(payload.seq)) return payload;
  } catch { /* not JSON */ }
  return null;
}

const text = (value, fallback) => (typeof value === "string" && value ? value : fallback);

// What this worker showed in the last seconds, by conversation: a notification just shown may not be
// listed by getNotifications yet (Firefox, when a browser back online gets a message and its edit
// together), and the push right behind it must still find it.
const recent = new Map();
const RECENT_MS = 10000;

function recentlyShown(conversationId) {
  const entry = recent.get(conversationId);
  return entry && Date.now() - entry.at < RECENT_MS ? entry.data : undefined;
}

// The conversation's notifications; when one was shown a moment ago but is not listed yet, asked again
// a few times (100 ms apart) before taking "none" for an answer.
async function listed(conversationId) {
  for (let attempt = 0; ; attempt += 1) {
    const shown = await self.registration.getNotifications({ tag: conversationId });
    if (shown.length > 0 || !recentlyShown(conversationId) || attempt >= 5) return shown;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// What pushes said about messages whose own push has not come yet, by conversation, for a few minutes.
const ahead = new Map();
const AHEAD_MS = 5 * 60 * 1000, AHEAD_MAX = 50;

function aheadOf(conversationId) {
  const entry = ahead.get(conversationId);
  return entry && Date.now() - entry.at < AHEAD_MS ? entry : undefined;
}

function keepAhead(conversationId, change) {
  const entry = aheadOf(conversationId) ?? { updates: new Map(), withdrawn: new Set(), readUpTo: 0 };
  change(entry);
  entry.at = Date.now();
  for (const kept of [entry.updates, entry.withdrawn]) {
    while (kept.size > AHEAD_MAX) kept.delete(kept.keys().next().value);  // the oldest first
  }
  ahead.set(conversationId, entry);
}

// The message's push as the pushes ahead of it leave it: null when it was withdrawn or read already.
function asLeftByPushesAhead(payload) {
  const early = payload.seq > 0 ? aheadOf(payload.conversationId) : undefined;  // seq 0: an invitation
  if (!early) return payload;
  if (payload.seq <= early.readUpTo || early.withdrawn.has(payload.seq)) return null;
  const edit = early.updates.get(payload.seq);
  return edit ? { ...payload, title: text(edit.title, payload.title), body: text(edit.body, payload.body) } : payload;
}

async function show(payload, alert) {
  await self.registration.showNotification(text(payload.title, "Parley"), {
    body: text(payload.body, "New message"),
    tag: payload.conversationId,
    data: payload,
    renotify: alert,
    silent: !alert,
    icon: "/favicon.svg",
  });
  recent.set(payload.conversationId, { data: payload, at: Date.now() });
}

function setBadge(count) {
  if (!Number.isInteger(count) || !("setAppBadge" in self.navigator)) return Promise.resolve();
  return (count > 0 ? self.navigator.setAppBadge(count) : self.navigator.clearAppBadge()).catch(() => {});
}

async function onPush(data) {
  const payload = readPayload(data);
  if (!payload) {
    await self.registration.showNotification("Parley", { body: "New message", tag: "parley", icon: "/favicon.svg", data: { url: "/" } });
    return;
  }
  const shown = await listed(payload.conversationId);
  const current = shown.find((notification) => Number.isInteger(notification.data?.seq))?.data ?? recentlyShown(payload.conversationId);
  const showing = current?.seq;
  if (payload.kind !== "message") await setBadge(payload.badge);
  switch (payload.kind) {
    case "message": {
      // Shown already (or a newer one is), or read or withdrawn by pushes ahead of it: a late push
      // changes nothing, the badge neither (it counts what was unread when it was sent).
      const left = showing >= payload.seq ? null : asLeftByPushesAhead(payload);
      if (!left) return;
      await setBadge(payload.badge);
      await show(left, true);
      break;
    }
    case "update":
      if (showing === payload.seq) {
        await show({ ...current, title: text(payload.title, current.title), body: text(payload.body, current.body) }, false);
      } else if (!(showing > payload.seq)) {
        keepAhead(payload.conversationId, (early) => early.updates.set(payload.seq, payload));
      }
      break;
    case "withdraw":
      if (showing === payload.seq) close(payload.conversationId, shown);
      else if (!(showing > payload.seq)) keepAhead(payload.conversationId, (early) => early.withdrawn.add(payload.seq));
      break;
    case "read":
      if (showing <= payload.seq) close(payload.conversationId, shown);
      keepAhead(payload.conversationId, (early) => { early.readUpTo = Math.max(early.readUpTo, payload.seq); });
      break;
  }
}

function close(conversationId, shown) {
  recent.delete(conversationId);
  for (const notification of shown) notification.close();
}

// One push at a time: a push reads what is shown while the one before may still be showing its own
// (Chrome can even drop a notification being shown while the list of them is read).
let pushes = Promise.resolve();

self.addEventListener("push", (event) => {
  const data = event.data;
  pushes = pushes.then(() => onPush(data)).catch(() => {});
  event.waitUntil(pushes);
});

// A click opens the conversation: in a Parley window already open (focused, then told where to go),
// or in a new one.
self.addEventListener("notificationclick", (event) => {
  forget(event.notification);
  event.notification.close();
  event.waitUntil(openChat(event.notification.data?.url));
});

// Dismissed (or clicked): what `recent` holds must not stand in for it, so an update of its message
// does not bring it back.
self.addEventListener("notificationclose", (event) => forget(event.notification));

function forget(notification) {
  if (recent.get(notification.tag)?.data?.seq === notification.data?.seq) recent.delete(notification.tag);
}

async function openChat(raw) {
  let url = new URL("/", self.location.origin);
  try {
    const wanted = new URL(raw, self.location.origin);
    if (wanted.origin === self.location.origin) url = wanted;  // never anywhere else
  } catch { /* no url: the app's start */ }
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const client = windows.find((candidate) => candidate.focused) ?? windows.find((candidate) => candidate.visibilityState === "visible") ?? windows[0];
  if (!client) {
    await self.clients.openWindow(url.href);
    return;
  }
  await client.focus().catch(() => {});
  client.postMessage({ type: "open", url: url.href });  // the page follows it (app.js) without a reload
}

// The push service renewed (or dropped) the subscription: subscribe again and give the server the new
// one, with the token the page left; the old endpoint is removed.
self.addEventListener("pushsubscriptionchange", (event) => {
  event.waitUntil(resubscribe(event.oldSubscription, event.newSubscription));
});

async function resubscribe(old, fresh) {
  const cached = await caches.open(SESSION_CACHE).then((cache) => cache.match("/parley-session"));
  const token = cached ? (await cached.json().catch(() => null))?.token : null;
  if (!token) return;  // signed out, or notifications were turned off here
  const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json" };
  let subscription = fresh;
  if (!subscription) {
    let key = old?.options?.applicationServerKey;
    if (!key) {
      const response = await fetch("/v1/push/config", { headers });
      if (!response.ok) return;
      key = base64UrlToBytes((await response.json()).vapidPublicKey);
    }
    subscription = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  }
  await fetch("/v1/push/subscriptions", { method: "POST", headers, body: JSON.stringify(subscription.toJSON()) });
  if (old?.endpoint && old.endpoint !== subscription.endpoint) {
    await fetch("/v1/push/subscriptions", { method: "DELETE", headers, body: JSON.stringify({ endpoint: old.endpoint }) }).catch(() => {});
  }
}

function base64UrlToBytes(value) {
  const base64 = value.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(value.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
}
