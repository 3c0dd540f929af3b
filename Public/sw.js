// Keeps the app shell available offline, so the client opens (with its outbox) while the server is
// unreachable. Network first: a reachable server always serves the current files; the API is never cached.
const CACHE = "parley-shell-v4";
const SHELL = ["/", "/app.css", "/favicon.svg", "/js/app.js", "/js/api.js", "/js/chat-header.js", "/js/chat-view.js", "/js/composer-mode.js", "/js/dialog.js",
  "/js/dom.js", "/js/emoji-picker.js", "/js/entries.js", "/js/format.js", "/js/group-panel.js", "/js/group-state.js", "/js/list-view.js",
  "/js/mentions.js", "/js/message-actions.js", "/js/message-menu.js", "/js/message-row.js", "/js/new-group.js", "/js/people-picker.js",
  "/js/search.js", "/js/socket.js", "/js/store.js"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
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
