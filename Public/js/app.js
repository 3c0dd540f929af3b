// Entry point: session, routing (#/c/<conversation id> or #/u/<user id> for a new chat), wiring.
import { Api, ApiError } from "./api.js";
import { BackgroundAlerts } from "./background-alerts.js";
import { ChatView } from "./chat-view.js";
import { $, listeningUntil, toast } from "./dom.js";
import { keepFocusInOpenDialog } from "./dialog.js";
import { ComposerDrafts } from "./drafts.js";
import { entryLines } from "./entries.js";
import { inviterName, isolate, messagePreview } from "./format.js";
import { GroupPanel } from "./group-panel.js";
import { ListView } from "./list-view.js";
import { MessageInfo } from "./message-info.js";
import { NewGroupDialog } from "./new-group.js";
import { ConversationNotifications, NotificationSettingsDialog } from "./notification-dialogs.js";
import { ProfilePhoto } from "./profile-photo.js";
import { DisplayNameDialog } from "./display-name.js";
import { PushControl, dismissNotifications } from "./push.js";
import { SearchDialog, stopSearch } from "./search.js";
import { LiveSocket } from "./socket.js";
import { ChatStore } from "./store.js";

const SESSION_KEY = "parley.session";
let session = readSession();
let app = null;

function readSession() {
  try { return JSON.parse(localStorage.getItem(SESSION_KEY)); } catch { return null; }
}

const api = new Api(() => session?.token);
// Made once (their elements are the page's); each sign-in attaches its account.
const notificationSettings = new NotificationSettingsDialog();
const chatNotifications = new ConversationNotifications();
const profilePhoto = new ProfilePhoto({ api, getSession: () => session, onChange: (user) => setMe(user) });
const displayName = new DisplayNameDialog({ api, getSession: () => session, onChange: (user) => setMe(user) });

/** Me as the server says now (a new photo or name): kept in the session, shown wherever I am. */
function setMe(user) {
  if (!session || !user?.id || user.id !== session.user.id) return;
  session.user = user;
  localStorage.setItem(SESSION_KEY, JSON.stringify(session));
  $("remove-photo").hidden = !user.photo;
  app?.store.changed();
}

// MARK: auth

let registering = false;
function setRegistering(value) {
  registering = value;
  $("auth-title").textContent = value ? "Create an account" : "Sign in";
  $("auth-submit").textContent = value ? "Create account" : "Sign in";
  $("auth-switch").textContent = value ? "Have an account? Sign in" : "New here? Create an account";
  $("display-name-field").hidden = !value;
  $("auth-password").autocomplete = value ? "new-password" : "current-password";
  $("auth-error").hidden = true;
}

$("auth-switch").addEventListener("click", () => setRegistering(!registering));
$("auth-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const username = $("auth-username").value.trim();
  const password = $("auth-password").value;
  const displayName = $("auth-display-name").value.trim() || username;
  $("auth-submit").disabled = true;
  try {
    const result = registering ? await api.register(username, displayName, password) : await api.login(username, password);
    session = { token: result.token, user: result.user };
    localStorage.setItem(SESSION_KEY, JSON.stringify(session));
    $("auth-password").value = "";
    start();
    // The form is gone: focus goes to the app's heading (not the page), the next Tab to "New chat",
    // unless opening a chat from the address put it in that chat already.
    if (document.activeElement === document.body || $("auth-view").contains(document.activeElement)) $("app-heading").focus();
  } catch (error) {
    $("auth-error").textContent = error.message;
    $("auth-error").hidden = false;
  } finally {
    $("auth-submit").disabled = false;
  }
});

function showAuth() {
  $("app-view").hidden = true;
  $("auth-view").hidden = false;
  setRegistering(false);
  $("auth-username").focus();
}

async function logout({ remote = true, everywhere = false } = {}) {
  // What the account had open (Message info reading every few seconds, a panel) closes with it.
  for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
  app?.alerts.stop();  // what this page showed of the account closes
  app?.store.uploads.stop();  // the files stay in the outbox, for the next sign-in of this account
  app?.store.stop();  // nor does it follow other tabs' outbox any more
  // Nothing of this account is pushed here any more (while the token still works to say so).
  await app?.push.forget().catch(() => {});
  notificationSettings.detach();
  chatNotifications.detach();
  if (remote) await (everywhere ? api.logoutEverywhere() : api.logout()).catch(() => {});
  app?.socket.stop();
  app?.account.abort();
  app?.chat.drafts.forget();
  if (session) ComposerDrafts.forget(session.user.id);
  stopSearch();
  app = null;
  session = null;
  shownConnection = null;
  clearTimeout(connectingTimer);
  $("offline-banner").hidden = true;
  localStorage.removeItem(SESSION_KEY);
  history.replaceState(null, "", "/");
  showAuth();
}

// MARK: app

function start() {
  $("auth-view").hidden = true;
  $("app-view").hidden = false;
  const store = new ChatStore({ api, session });
  const openConversation = (id) => { location.hash = `#/c/${id}`; };
  const account = new AbortController();  // aborted at sign-out: the views below stop listening
  const { panel, info, chat, list } = listeningUntil(account.signal, () => {
    const panel = new GroupPanel(store);
    const info = new MessageInfo(store);
    const chat = new ChatView(store, {
      onGroupInfo: (id) => panel.open(id),
      onMessageInfo: (id, message) => info.open(id, message),
    });
    const newGroup = new NewGroupDialog(store, { onOpen: openConversation });
    const list = new ListView(store, {
      onOpen: openConversation,
      onStartChat: (user) => {
        const id = store.conversationWith(user.id);
        location.hash = store.conversations.has(id) ? `#/c/${id}` : `#/u/${user.id}`;
      },
      onNewGroup: () => newGroup.open(),
    });
    return { panel, info, chat, list };
  });
  const search = new SearchDialog(store, { onChoose: (id, seq) => openAt(id, seq) });  // its listeners are the page's, made once
  const socket = new LiveSocket({
    token: session.token,
    getPosition: () => store.position,
    onFrame: (frame) => {
      if (frame.type === "error" && frame.error?.code === "unauthorized") logout({ remote: false });
      else store.handleFrame(frame);
    },
    onState: (state) => store.setConnection(state),
  });
  store.socket = socket;
  store.actions.onError = (text) => toast(text);
  const push = new PushControl(api, session.user.id);
  // The page in the background: it shows the notification a push would have (the server pushes none while it is connected).
  const alerts = new BackgroundAlerts(store, push);
  store.onUpdated = (message) => {
    alerts.updated(message);
    search.updated(message);
    // Deleted for everyone or edited: the words it had leave the screen reader's region too (it keeps the last five).
    if (message.deletedAt || message.editedAt) {
      for (const line of $("announcer").querySelectorAll("p")) if (line.dataset.message === messageKey(message)) line.remove();
    }
  };
  store.onHidden = (hidden) => search.updated(hidden, true);
  store.onRead = (id, seq) => alerts.read(id, seq);
  store.onProfile = (user) => {
    setMe(user);  // mine, changed on another device: saved and shown in the menu
    // A chat before its first message: the person as they are now.
    if (chat.other?.userId === user.id) chat.other = { ...chat.other, photo: user.photo, displayName: user.displayName };
  };
  store.onIncoming = (message) => {
    alerts.message(message);
    if (message.deletedAt) return;  // replayed after it was deleted: nothing to tell
    // A chat muted (or mentions only) interrupts a screen reader no more than it shows a notification;
    // the chat open on screen is read out all the same, as it shows.
    if (message.conversationId !== chat.id && !store.notifications.notifies(message)) return;
    const summary = store.conversations.get(message.conversationId);
    if (summary && store.isGroup(summary)) {
      // In a group, who wrote it matters as much as where.
      const title = `“${isolate(store.titleOf(summary))}”`;
      if (message.entry) announce(`${title}: ${entryLines(message, (id) => store.nameOf(id, summary), store.me).join(". ")}`);
      else announce(`New message from ${isolate(store.nameOf(message.senderId, summary) ?? "someone")} in ${title}: ${messagePreview(message).slice(0, 140)}`, message);
      return;
    }
    const name = summary ? store.directName(store.other(summary)) : "someone";
    announce(`New message from ${isolate(name)}: ${messagePreview(message).slice(0, 140)}`, message);
  };
  store.onInvitation = (invitation) => announce(`${inviterName(invitation.inviter)} invited you to “${isolate(invitation.title)}”`);
  notificationSettings.attach(store, push);
  chatNotifications.attach(store, () => chat.id);
  store.subscribe(() => {
    list.openId = chat.id;
    list.render();
    chat.render();
    panel.render();
    info.refresh();
    chatNotifications.render();
    notificationSettings.render();
    search.refresh();
    keepFocusInOpenDialog();  // after every redraw: what hid a focused control gives focus back inside
    showConnection(store.connection);
  });
  app = { store, chat, list, socket, push, alerts, account };
  $("remove-photo").hidden = !session.user.photo;
  // What a crash took from the outbox comes back first; then messages whose files were uploading go on.
  store.recoverOutbox().finally(() => store.uploads.resume());
  socket.start();
  push.start().catch(() => push.refresh().catch(() => {}));
  route();
}

// The connection banner: nothing while online; "Connecting…" only when connecting takes more than a
// moment (so a page load does not flash a false alarm); "offline" once a connection was lost or the
// browser says the network is gone, and it stays while reconnect attempts go on.
let shownConnection = null;
let connectingTimer = null;
const OFFLINE_TEXT = "You are offline. Messages will be sent when the connection returns.";

function showConnection(state) {
  if (state === shownConnection) return;
  shownConnection = state;
  const banner = $("offline-banner");
  clearTimeout(connectingTimer);
  if (state === "online") {
    banner.hidden = true;
  } else if (state === "connecting" && navigator.onLine !== false) {
    if (banner.hidden) {
      connectingTimer = setTimeout(() => { banner.textContent = "Connecting…"; banner.hidden = false; }, 2000);
    }
  } else {
    banner.textContent = OFFLINE_TEXT;
    banner.hidden = false;
  }
}

// A search result to open its chat at (the route that follows takes it).
let target = null;

function openAt(id, seq) {
  target = { id, seq };
  const hash = `#/c/${id}`;
  if (location.hash === hash) route();
  else location.hash = hash;
}

async function route() {
  if (!app) return;
  const { store, chat } = app;
  const [, kind, id] = location.hash.match(/^#\/(c|u)\/(.+)$/) ?? [];
  $("app-view").classList.toggle("chat-open", Boolean(kind));
  const atSeq = kind === "c" && target?.id === id ? target.seq : null;
  target = null;
  if (kind === "c") {
    const summary = store.conversations.get(id);
    dismissNotifications(id);  // on screen now: its notification has nothing more to tell
    await chat.open(id, summary && !store.isGroup(summary) ? store.other(summary) : null, atSeq);
  } else if (kind === "u") {
    const conversationId = store.conversationWith(id);
    if (store.conversations.has(conversationId)) { location.replace(`#/c/${conversationId}`); return; }
    try {
      const user = await api.user(id);
      await chat.open(conversationId, { userId: user.id, displayName: user.displayName, photo: user.photo });
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) logout({ remote: false });
    }
  } else {
    chat.close();
  }
  store.changed();
}

/** Says `text` to screen readers (a polite live region); `message`, when it is about one, marks the line. */
function announce(text, message = null) {
  const region = $("announcer");
  const line = document.createElement("p");
  line.textContent = text;
  if (message) line.dataset.message = messageKey(message);
  region.append(line);
  while (region.childElementCount > 5) region.firstElementChild.remove();
}

function messageKey(message) { return `${message.conversationId}#${message.seq}`; }

window.addEventListener("hashchange", route);
navigator.serviceWorker?.register("/sw.js").catch(() => {});
// A notification clicked while this page is open: the service worker asks it to show that chat.
navigator.serviceWorker?.addEventListener("message", (event) => {
  if (event.data?.type !== "open" || typeof event.data.url !== "string") return;
  const url = new URL(event.data.url, location.origin);
  if (url.origin === location.origin && url.hash !== location.hash) location.hash = url.hash;
});
$("notification-settings").addEventListener("click", () => {
  setMenu(false);
  $("menu-button").focus();  // where focus goes back when the dialog closes (the menu item is hidden by then)
  notificationSettings.open();
});
$("change-name").addEventListener("click", () => { setMenu(false); $("menu-button").focus(); displayName.open(); });
$("set-photo").addEventListener("click", () => { setMenu(false); $("menu-button").focus(); profilePhoto.choose(); });
$("remove-photo").addEventListener("click", () => { setMenu(false); $("menu-button").focus(); profilePhoto.remove(); });
$("logout").addEventListener("click", () => logout());
$("logout-all").addEventListener("click", () => logout({ everywhere: true }));

// The account menu: opens under its button, closes on a choice, Escape, or a click elsewhere.
function setMenu(open) {
  $("account-menu").hidden = !open;
  $("menu-button").setAttribute("aria-expanded", String(open));
  if (open) $("account-menu").querySelector("button").focus();
}
$("menu-button").addEventListener("click", (event) => { event.stopPropagation(); setMenu($("account-menu").hidden); });
$("account-menu").addEventListener("keydown", (event) => { if (event.key === "Escape") { setMenu(false); $("menu-button").focus(); } });
document.addEventListener("click", () => setMenu(false));
$("back").addEventListener("click", () => { location.hash = ""; });

if (session?.token) {
  // Check the stored session is still valid before showing the app.
  api.request("GET", "/v1/me").then((user) => { if (user?.id === session.user.id) setMe(user); start(); }, (error) => {
    if (error instanceof ApiError && error.status === 401) logout({ remote: false });
    else start();  // offline: show what we have; the socket keeps trying
  });
} else {
  showAuth();
}
