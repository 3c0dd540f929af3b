"""The web client's notifications end to end: the settings dialog (turning push on and off, what
notifications show), a chat's notify level and mute (persisted, shown in the list), keyboard only,
phone width, dark mode and axe; and the service worker's display rules, driven by pushes delivered
through Chrome DevTools (ServiceWorker.deliverPushMessage: the payload as plain JSON, no encryption)."""
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests
import websocket
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import page_problems, sign_in

MUTED_ALWAYS = 253402300799000
HOUR_MS = 3600 * 1000


def wait(driver, condition, timeout=15):
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))


def by_id(driver, element_id):
    return driver.find_element(By.ID, element_id)


def active_id(driver):
    return driver.execute_script("return document.activeElement?.id ?? ''")


def press(driver, *keys):
    ActionChains(driver).send_keys(*keys).perform()


def shift_tab(driver):
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()


def tab_to(driver, element_id, backwards=False, limit=12):
    """Moves the keyboard focus with Tab (or Shift+Tab) until `element_id` has it."""
    for _ in range(limit):
        if active_id(driver) == element_id:
            return
        shift_tab(driver) if backwards else press(driver, Keys.TAB)
    assert active_id(driver) == element_id, f"Tab never reached #{element_id} (at #{active_id(driver)})"


class PushInbox:
    """A push service on loopback that takes every push (201) and keeps what came."""

    def __init__(self):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "size": len(body)})
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def inbox():
    inbox = PushInbox()
    yield inbox
    inbox.close()


# Headless Chromium has no push service to subscribe with (no Google servers): the page's
# PushManager.subscribe / getSubscription are replaced before the app loads by ones that keep a fake
# subscription (a real P-256 key and auth secret, so the server takes it) pointing at the test's
# push service. Notification.requestPermission is counted, to see when the permission is asked.
FAKE_PUSH = """
(() => {
  if (location.origin !== %(origin)s || !window.PushManager) return;
  window.__permissionRequests = 0;
  const request = Notification.requestPermission.bind(Notification);
  Notification.requestPermission = (...args) => { window.__permissionRequests++; return request(...args); };
  const KEY = "__fakePush";
  const b64 = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const fake = (kept) => ({
    endpoint: kept.endpoint, expirationTime: null,
    options: { userVisibleOnly: true, applicationServerKey: Uint8Array.from(kept.serverKey).buffer },
    toJSON: () => ({ endpoint: kept.endpoint, expirationTime: null, keys: kept.keys }),
    unsubscribe: async () => { localStorage.removeItem(KEY); localStorage.setItem("__fakePushUnsubscribed", "yes"); return true; },
  });
  PushManager.prototype.getSubscription = async function () {
    const kept = JSON.parse(localStorage.getItem(KEY) || "null");
    return kept ? fake(kept) : null;
  };
  PushManager.prototype.subscribe = async function (options) {
    const pair = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
    const raw = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    const serverKey = new Uint8Array(options.applicationServerKey);
    const kept = { endpoint: %(endpoint)s, keys: { p256dh: b64(raw), auth: b64(crypto.getRandomValues(new Uint8Array(16))) },
                   serverKey: [...serverKey] };
    localStorage.setItem(KEY, JSON.stringify(kept));
    localStorage.setItem("__fakePushOptions", JSON.stringify({ userVisibleOnly: options.userVisibleOnly, key: b64(serverKey) }));
    return fake(kept);
  };
})();
"""


def before_the_app(driver, source):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})


def set_notification_permission(driver, server, setting):
    driver.execute_cdp_cmd("Browser.setPermission", {"origin": server.url, "permission": {"name": "notifications"}, "setting": setting})


def open_settings(driver):
    by_id(driver, "menu-button").click()
    by_id(driver, "notification-settings").click()
    wait(driver, lambda d: by_id(d, "notifications-dialog").get_attribute("open") is not None)


def push_state(driver):
    return by_id(driver, "push-state").text


def toggle(driver):
    return by_id(driver, "push-toggle")


def websocket_count(server):
    import re
    text = requests.get(server.url + "/metrics", timeout=5).text
    match = re.search(r"^parley_websocket_connections(?:\{[^}]*\})? ([0-9.]+)$", text, re.M)
    return int(float(match.group(1))) if match else 0


def wait_for(condition, timeout=30, message="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {message}")


def open_with_fake_push(browsers, server, session, endpoint):
    """A browser signed in as `session` whose push subscriptions are `endpoint` (FAKE_PUSH), permission
    granted, on the empty list, with the notification settings open."""
    driver = browsers()
    before_the_app(driver, FAKE_PUSH % {"origin": json.dumps(server.url), "endpoint": json.dumps(endpoint)})
    set_notification_permission(driver, server, "granted")
    sign_in(driver, server, session)
    wait(driver, lambda d: by_id(d, "list-empty").is_displayed())
    open_settings(driver)
    return driver


# MARK: turning push on and off


def test_turning_notifications_on_asks_only_on_the_click_and_the_server_pushes_to_the_subscription(server, browsers, inbox):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    endpoint = inbox.url + "/push/alice-device"
    a = open_with_fake_push(browsers, server, alice, endpoint)
    wait(a, lambda d: push_state(d) == "Notifications are off on this device.")
    assert toggle(a).accessible_name == "Turn on notifications"
    assert a.switch_to.active_element == toggle(a), "the dialog opens on its main action"
    assert a.execute_script("return window.__permissionRequests") == 0, "nothing asked before the click"

    toggle(a).click()
    wait(a, lambda d: push_state(d) == "Notifications are on for this device.")
    assert toggle(a).accessible_name == "Turn off notifications"
    assert a.switch_to.active_element == toggle(a), "focus stays on the control"
    assert a.execute_script("return window.__permissionRequests") == 1
    options = json.loads(a.execute_script("return localStorage.getItem('__fakePushOptions')"))
    assert options == {"userVisibleOnly": True, "key": server.rest(alice, "GET", "/v1/push/config").json()["vapidPublicKey"]}

    # The server has the subscription: with Alice's page gone (no live connection), Bob's message is pushed to it.
    a.get("about:blank")
    wait_for(lambda: websocket_count(server) == 0, message="Alice's socket to close")
    server.send(bob, "Are you there?", recipient=alice["user"]["id"])
    pushed = wait_for(lambda: inbox.received, message="a push at Alice's endpoint")
    assert pushed[0]["path"] == "/push/alice-device"
    assert pushed[0]["headers"].get("content-encoding") == "aes128gcm" and pushed[0]["size"] > 0
    assert pushed[0]["headers"].get("authorization", "").startswith("vapid ")

    # Back, and off again: the server forgets the subscription (a second DELETE finds nothing), the browser too.
    sign_in(a, server, alice)
    wait(a, lambda d: d.find_elements(By.CSS_SELECTOR, "#conversation-list li"))
    open_settings(a)
    wait(a, lambda d: push_state(d) == "Notifications are on for this device.")
    toggle(a).click()
    wait(a, lambda d: push_state(d) == "Notifications are off on this device.")
    assert toggle(a).accessible_name == "Turn on notifications"
    assert a.execute_script("return localStorage.getItem('__fakePushUnsubscribed')") == "yes"
    assert a.execute_script("return window.__permissionRequests") == 0, "turning off asks nothing"
    assert server.rest(alice, "DELETE", "/v1/push/subscriptions", {"endpoint": endpoint}).status_code == 404


def test_signing_out_takes_this_accounts_subscription_off_the_server(server, browsers, inbox):
    alice = server.register("alice", "Alice")
    endpoint = inbox.url + "/push/shared-computer"
    a = open_with_fake_push(browsers, server, alice, endpoint)
    wait(a, lambda d: push_state(d).startswith("Notifications are off"))
    toggle(a).click()
    wait(a, lambda d: push_state(d) == "Notifications are on for this device.")
    press(a, Keys.ESCAPE)
    by_id(a, "menu-button").click()
    by_id(a, "logout").click()
    wait(a, lambda d: by_id(d, "auth-view").is_displayed())
    assert a.execute_script("return localStorage.getItem('__fakePushUnsubscribed')") == "yes"
    session = server.register("alice2", "Alice again")  # a token to ask with: Alice's own was revoked
    assert server.rest(session, "DELETE", "/v1/push/subscriptions", {"endpoint": endpoint}).status_code == 404


def test_blocked_permission_and_a_browser_without_push_say_so_and_offer_no_button(server, browsers):
    blocked, alice = signed_in_alice(server, browsers, "denied")
    open_settings(blocked)
    wait(blocked, lambda d: "blocked" in push_state(d))
    assert "site settings" in push_state(blocked)
    assert not toggle(blocked).is_displayed()
    assert blocked.switch_to.active_element.get_attribute("name") == "preview", "focus goes to the first control there is"

    old = browsers()
    before_the_app(old, "delete window.PushManager;")
    sign_in(old, server, alice)
    wait(old, lambda d: by_id(d, "list-empty").is_displayed())
    open_settings(old)
    wait(old, lambda d: push_state(d) == "This browser cannot receive notifications.")
    assert not toggle(old).is_displayed()


def test_what_notifications_show_is_saved_and_read_back(server, browsers):
    alice = server.register("alice", "Alice")
    a = browsers()
    sign_in(a, server, alice)
    wait(a, lambda d: by_id(d, "list-empty").is_displayed())
    open_settings(a)
    wait(a, lambda d: by_id(d, "preview-full").is_selected())
    names = [by_id(a, f"preview-{value}").accessible_name for value in ("full", "sender", "none")]
    assert names == ["Message content", "Sender only", "Nothing but “New message”"]
    by_id(a, "preview-sender").click()
    wait_for(lambda: server.notification_settings(alice)["preview"] == "sender", timeout=10, message="preview sender")
    by_id(a, "preview-none").click()
    wait_for(lambda: server.notification_settings(alice)["preview"] == "none", timeout=10, message="preview none")
    a.refresh()
    wait(a, lambda d: by_id(d, "list-empty").is_displayed())
    open_settings(a)
    wait(a, lambda d: by_id(d, "preview-none").is_selected())
    # Changed on another device: the dialog reads it again when it opens.
    server.rest(alice, "PUT", "/v1/notifications", {"preview": "full"}).raise_for_status()
    press(a, Keys.ESCAPE)
    open_settings(a)
    wait(a, lambda d: by_id(d, "preview-full").is_selected())


# MARK: per conversation


def make_chats(server):
    """Alice with a direct chat (Bob) and a group (Book club: Bob, Alice, Carol, all contacts of Bob)."""
    alice, bob, carol = server.register("alice", "Alice"), server.register("bob", "Bob"), server.register("carol", "Carol")
    direct = server.send(bob, "Hi Alice", recipient=alice["user"]["id"])["conversationId"]
    server.send(alice, "Hi Bob", conversation=direct)
    with_carol = server.send(bob, "Hi Carol", recipient=carol["user"]["id"])["conversationId"]
    server.send(carol, "Hi Bob", conversation=with_carol)
    response = server.rest(bob, "POST", "/v1/groups", {"clientId": str(uuid.uuid4()), "title": "Book club",
                                                       "memberIds": [alice["user"]["id"], carol["user"]["id"]]})
    assert response.status_code == 201 and not response.json().get("invited"), response.text
    group = response.json()["conversation"]["id"]
    server.send(carol, "Welcome everyone", conversation=group)
    return alice, bob, carol, direct, group


def row_of(driver, conversation):
    return driver.execute_script("""const li = [...document.querySelectorAll('#conversation-list li')].find(l => l.dataset.key === arguments[0]);
        if (!li) return null;
        const icon = li.querySelector('.quiet-icon');
        return {label: li.querySelector('button').getAttribute('aria-label'), icon: icon ? icon.getAttribute('aria-label') : null,
                iconShown: icon ? icon.getBoundingClientRect().width > 0 : false};""", conversation)


def test_a_chat_muted_and_set_to_mentions_persists_shows_in_the_list_and_the_server_agrees(server, browsers):
    alice, bob, carol, direct, group = make_chats(server)
    a = browsers()
    sign_in(a, server, alice)
    wait(a, lambda d: row_of(d, group) and row_of(d, direct))
    assert row_of(a, group)["icon"] is None
    a.get(f"{server.url}/#/c/{group}")
    bell = wait(a, lambda d: by_id(d, "chat-notify") if by_id(d, "chat-notify").is_displayed() else None)
    assert bell.accessible_name == "Chat notifications"
    bell.click()
    wait(a, lambda d: by_id(d, "chat-notify-dialog").get_attribute("open") is not None)
    assert by_id(a, "chat-notify-for").text == "Book club"
    assert [by_id(a, f"level-{v}").accessible_name for v in ("all", "mentions", "none")] == ["All messages", "Mentions only", "Nothing"]
    assert by_id(a, "level-all").is_selected() and by_id(a, "mute-state").text == "Not muted"
    assert not by_id(a, "unmute").is_displayed()

    by_id(a, "level-mentions").click()
    wait_for(lambda: server.setting_of(alice, group)["level"] == "mentions", timeout=10, message="level mentions")
    clicked_at = time.time() * 1000
    by_id(a, "mute-8h").click()
    wait(a, lambda d: d.find_element(By.ID, "mute-state").text.startswith("Muted until"))
    setting = server.setting_of(alice, group)
    assert setting["level"] == "mentions" and abs(setting["mutedUntil"] - (clicked_at + 8 * HOUR_MS)) < 120_000, setting
    assert by_id(a, "unmute").is_displayed()
    press(a, Keys.ESCAPE)
    wait(a, lambda d: by_id(d, "chat-notify-dialog").get_attribute("open") is None)
    assert by_id(a, "chat-notify").accessible_name == "Chat notifications, muted"
    row = wait(a, lambda d: (r := row_of(d, group)) and r["icon"] and r)
    assert row == {"label": "Book club, group, muted", "icon": "Muted", "iconShown": True}

    # A reload reads it back from the server: still muted, still mentions only.
    a.refresh()
    row = wait(a, lambda d: (r := row_of(d, group)) and r["icon"] and r)
    assert row["icon"] == "Muted" and row["label"].endswith(", muted")
    assert row_of(a, direct)["icon"] is None
    wait(a, lambda d: by_id(d, "chat-notify").is_displayed())
    by_id(a, "chat-notify").click()
    wait(a, lambda d: by_id(d, "level-mentions").is_selected() and by_id(d, "mute-state").text.startswith("Muted until"))
    press(a, Keys.ESCAPE)

    # A direct chat: all or nothing (no mentions there); muted for good, then unmuted.
    a.get(f"{server.url}/#/c/{direct}")
    wait(a, lambda d: by_id(d, "chat-name").text == "Bob" and by_id(d, "chat-notify").is_displayed())
    by_id(a, "chat-notify").click()
    wait(a, lambda d: by_id(d, "chat-notify-for").text == "Bob")
    assert by_id(a, "level-all").is_displayed() and by_id(a, "level-none").is_displayed()
    assert not by_id(a, "level-mentions").is_displayed()
    by_id(a, "mute-always").click()
    wait(a, lambda d: by_id(d, "mute-state").text == "Muted until you unmute it")
    assert server.setting_of(alice, direct)["mutedUntil"] == MUTED_ALWAYS
    wait(a, lambda d: row_of(d, direct)["icon"] == "Muted")
    by_id(a, "unmute").click()
    wait(a, lambda d: by_id(d, "mute-state").text == "Not muted")
    assert a.switch_to.active_element == by_id(a, "mute-8h"), "the hidden Unmute hands focus on"
    assert server.setting_of(alice, direct)["mutedUntil"] is None
    wait(a, lambda d: row_of(d, direct)["icon"] is None)
    by_id(a, "level-none").click()
    wait_for(lambda: server.setting_of(alice, direct)["level"] == "none", timeout=10, message="level none")
    wait(a, lambda d: row_of(d, direct)["icon"] == "Notifications off")
    assert row_of(a, direct)["label"].endswith(", notifications off")


def test_keyboard_only_at_phone_width_in_dark_mode_with_no_axe_findings(server, browsers, tmp_path):
    alice, bob, carol, direct, group = make_chats(server)
    a = browsers(dark=True, width=390, height=844)
    a.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    sign_in(a, server, alice)
    wait(a, lambda d: row_of(d, group))
    assert a.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches")
    problems = []

    # The account settings: Tab to the menu, Enter, Enter on "Notifications"; Escape gives focus back.
    a.execute_script("document.activeElement?.blur()")
    tab_to(a, "menu-button")
    press(a, Keys.ENTER)
    wait(a, lambda d: active_id(d) == "notification-settings")
    press(a, Keys.ENTER)
    wait(a, lambda d: by_id(d, "notifications-dialog").get_attribute("open") is not None and active_id(d) == "push-toggle")
    assert a.switch_to.active_element.accessible_name == "Turn on notifications"
    press(a, Keys.TAB)
    assert active_id(a) == "preview-full"
    press(a, Keys.ARROW_DOWN)
    wait_for(lambda: server.notification_settings(alice)["preview"] == "sender", timeout=10, message="preview sender")
    assert by_id(a, "preview-sender").is_selected()
    problems += page_problems(a, "dark phone settings", tmp_path)
    press(a, Keys.ESCAPE)
    wait(a, lambda d: by_id(d, "notifications-dialog").get_attribute("open") is None and active_id(d) == "menu-button")

    # A group chat: Enter on its row, Shift+Tab back to the bell, Enter; arrows choose, Tab, Enter mutes.
    a.execute_script("arguments[0].focus()", a.find_element(By.CSS_SELECTOR, f'#conversation-list li[data-key="{group}"] button'))
    press(a, Keys.ENTER)
    wait(a, lambda d: by_id(d, "chat-pane").is_displayed() and active_id(d) == "composer-input")
    tab_to(a, "chat-notify", backwards=True)
    assert a.switch_to.active_element.accessible_name == "Chat notifications"
    press(a, Keys.ENTER)
    wait(a, lambda d: by_id(d, "chat-notify-dialog").get_attribute("open") is not None and active_id(d) == "level-all")
    press(a, Keys.ARROW_DOWN)
    wait_for(lambda: server.setting_of(alice, group)["level"] == "mentions", timeout=10, message="level mentions")
    press(a, Keys.TAB)
    assert active_id(a) == "mute-8h" and a.switch_to.active_element.accessible_name == "Mute for 8 hours"
    press(a, Keys.ENTER)
    wait(a, lambda d: by_id(d, "mute-state").text.startswith("Muted until"))
    assert active_id(a) == "mute-8h"
    box = a.execute_script("const r = document.getElementById('chat-notify-dialog').getBoundingClientRect(); return [r.left, r.right]")
    assert box[0] >= 0 and box[1] <= 390, box
    problems += page_problems(a, "dark phone chat notifications", tmp_path)
    press(a, Keys.ESCAPE)
    wait(a, lambda d: by_id(d, "chat-notify-dialog").get_attribute("open") is None and active_id(d) == "chat-notify")
    assert a.switch_to.active_element.accessible_name == "Chat notifications, muted"
    setting = server.setting_of(alice, group)
    assert setting["level"] == "mentions" and setting["mutedUntil"] > time.time() * 1000 + 7 * HOUR_MS
    tab_to(a, "back", backwards=True)
    press(a, Keys.ENTER)
    wait(a, lambda d: by_id(d, "list-pane").is_displayed() and row_of(d, group)["iconShown"])
    problems += page_problems(a, "dark phone list with a muted chat", tmp_path)
    assert problems == []


def test_light_desktop_dialogs_and_list_have_no_axe_findings_and_nothing_widens_the_page(server, browsers, tmp_path):
    alice, bob, carol, direct, group = make_chats(server)
    server.rest(alice, "PUT", f"/v1/conversations/{group}/notifications", {"mute": "1w"}).raise_for_status()
    problems = []
    for dark, width, height in ((False, 1100, 760), (True, 1100, 760), (False, 390, 844)):
        label = f"{'dark' if dark else 'light'} {width}"
        d = browsers(dark=dark, width=width, height=height)
        sign_in(d, server, alice)
        wait(d, lambda b: (r := row_of(b, group)) and r["iconShown"])
        open_settings(d)
        wait(d, lambda b: push_state(b) != "Checking this browser…")
        problems += page_problems(d, f"{label} settings", tmp_path)
        press(d, Keys.ESCAPE)
        d.get(f"{server.url}/#/c/{group}")
        wait(d, lambda b: by_id(b, "chat-notify").is_displayed())
        by_id(d, "chat-notify").click()
        wait(d, lambda b: by_id(b, "mute-state").text.startswith("Muted until"))
        problems += page_problems(d, f"{label} chat notifications", tmp_path)
    assert problems == []


# MARK: the service worker


class DevTools:
    """A DevTools connection of our own to the page (chromedriver's execute_cdp_cmd cannot hear events)."""

    def __init__(self, driver):
        address = driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        targets = requests.get(f"http://{address}/json", timeout=5).json()
        page = next(t for t in targets if t["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=10, suppress_origin=True)
        self.last_id = 0
        self.events = []

    def call(self, method, **params):
        self.last_id += 1
        self.socket.send(json.dumps({"id": self.last_id, "method": method, "params": params}))
        self.socket.settimeout(10)
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.last_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result")
            self.events.append(message)

    def wait(self, condition, timeout=10, what="a DevTools event"):
        """Reads events until `condition()` (over self.events) holds."""
        deadline = time.time() + timeout
        while not (value := condition()):
            if time.time() >= deadline:
                raise AssertionError(f"timed out waiting for {what}")
            self.socket.settimeout(max(0.05, deadline - time.time()))
            try:
                self.events.append(json.loads(self.socket.recv()))
            except websocket.WebSocketTimeoutException:
                pass
        return value

    def background(self, name):
        """Background-service events (Application > Background services) of one kind: "Push event completed",
        "Notification displayed", "Notification closed"."""
        return [e["params"]["backgroundServiceEvent"] for e in self.events
                if e.get("method") == "BackgroundService.backgroundServiceEventReceived"
                and e["params"]["backgroundServiceEvent"]["eventName"] == name]

    def close(self):
        self.socket.close()


def notifications(driver):
    shown = driver.execute_async_script("""const done = arguments[arguments.length - 1];
        navigator.serviceWorker.ready.then((r) => r.getNotifications())
          .then((list) => done(list.map((n) => ({title: n.title, body: n.body, tag: n.tag, seq: n.data?.seq ?? null,
                                                 url: n.data?.url ?? null}))))
          .catch((error) => done(String(error)));""")
    assert not isinstance(shown, str), shown
    return sorted(shown, key=lambda n: n["tag"])


class PushHarness:
    """Pushes delivered to the page's service worker through DevTools, each waited for until the worker is done
    with it (the worker's own record: each push completed, each notification displayed or closed)."""

    def __init__(self, driver, server):
        self.driver = driver
        self.devtools = DevTools(driver)
        self.origin = server.url
        devtools = self.devtools
        devtools.call("ServiceWorker.enable")
        scope = server.url + "/"
        self.registration = devtools.wait(lambda: next((r for e in devtools.events if e.get("method") == "ServiceWorker.workerRegistrationUpdated"
                                                        for r in e["params"]["registrations"] if r["scopeURL"] == scope and not r["isDeleted"]), None),
                                          what="the service worker's registration")
        for service in ("pushMessaging", "notifications"):
            devtools.call("BackgroundService.setRecording", shouldRecord=True, service=service)
            devtools.call("BackgroundService.startObserving", service=service)

    def push(self, payload):
        """Delivers a push and waits until the worker is done with it; then what shows (read once: Chrome may
        drop a notification that is being shown while they are listed)."""
        completed = len(self.devtools.background("Push event completed"))
        data = payload if isinstance(payload, str) else json.dumps(payload)
        self.devtools.call("ServiceWorker.deliverPushMessage", origin=self.origin, registrationId=self.registration["registrationId"], data=data)
        self.devtools.wait(lambda: len(self.devtools.background("Push event completed")) > completed, what="the push to complete")
        assert [e["eventMetadata"] for e in self.devtools.background("Push event completed")][-1] == [{"key": "Status", "value": "Success"}]
        return notifications(self.driver)

    def displayed(self):
        return len(self.devtools.background("Notification displayed"))

    def __enter__(self):
        return self

    def __exit__(self, *failure):
        self.devtools.close()


# A direct conversation's pushes, as the server words them.
DIRECT = "dm_a_b"
DIRECT_PUSH = {"v": 1, "conversationId": DIRECT, "title": "Ada Lovelace", "url": f"/#/c/{DIRECT}", "badge": 1}


def signed_in_alice(server, browsers, permission):
    """Alice, new, signed in to a browser whose notification permission is `permission`: (driver, session)."""
    alice = server.register("alice", "Alice")
    driver = browsers()
    set_notification_permission(driver, server, permission)
    sign_in(driver, server, alice)
    wait(driver, lambda d: by_id(d, "list-empty").is_displayed())
    return driver, alice


def signed_in_with_a_service_worker(server, browsers):
    a, _ = signed_in_alice(server, browsers, "granted")
    assert a.execute_async_script("const done = arguments[0]; navigator.serviceWorker.ready.then((r) => done(!!r.active))")
    return a


def test_the_service_worker_shows_one_notification_per_conversation_and_tidies_it_up(server, browsers):
    with PushHarness(signed_in_with_a_service_worker(server, browsers), server) as harness:
        push, displayed, a = harness.push, harness.displayed, harness.driver
        conversation, base = DIRECT, dict(DIRECT_PUSH)
        assert push({**base, "kind": "message", "seq": 5, "body": "hello", "count": 1}) == [
            {"title": "Ada Lovelace", "body": "hello", "tag": conversation, "seq": 5, "url": f"/#/c/{conversation}"}]

        # A second message of the conversation replaces it: still one, with the newer text.
        shown = push({**base, "kind": "message", "seq": 6, "body": "are you there?", "count": 2})
        assert [(n["tag"], n["seq"], n["body"]) for n in shown] == [(conversation, 6, "are you there?")]

        # The same push again (at-least-once delivery) and an older one arriving late show nothing new.
        before = displayed()
        assert push({**base, "kind": "message", "seq": 6, "body": "are you there? (resent)", "count": 2}) == shown
        assert push({**base, "kind": "message", "seq": 4, "body": "an old one", "count": 1}) == shown
        assert displayed() == before

        # Another conversation has a notification of its own.
        shown = push({**base, "conversationId": "grp_x", "title": "Book club", "kind": "message", "seq": 2, "body": "Carol: hi",
                      "url": "/#/c/grp_x"})
        assert [(n["tag"], n["title"], n["body"]) for n in shown] == [(conversation, "Ada Lovelace", "are you there?"),
                                                                      ("grp_x", "Book club", "Carol: hi")]

        # An edit of another message changes nothing; an edit of the message shown changes its text.
        assert push({**base, "kind": "update", "seq": 5, "body": "edited old"}) == shown
        shown = push({**base, "kind": "update", "seq": 6, "body": "are you still there?"})
        assert [(n["tag"], n["seq"], n["body"]) for n in shown] == [(conversation, 6, "are you still there?"), ("grp_x", 2, "Carol: hi")]

        # Read elsewhere up to before it: it stays; up to it: it closes (the other conversation's stays).
        assert push({**base, "kind": "read", "seq": 5}) == shown
        assert [n["tag"] for n in push({**base, "kind": "read", "seq": 6})] == ["grp_x"]

        # Deleted for everyone: a withdraw of another message leaves it; of the one shown closes it.
        assert [(n["tag"], n["seq"]) for n in push({**base, "kind": "message", "seq": 7, "body": "oops", "count": 1})] == [
            (conversation, 7), ("grp_x", 2)]
        assert [(n["tag"], n["seq"]) for n in push({**base, "kind": "withdraw", "seq": 6})] == [(conversation, 7), ("grp_x", 2)]
        assert [n["tag"] for n in push({**base, "kind": "withdraw", "seq": 7})] == ["grp_x"]

        # A push that cannot be read still shows something.
        unknown = [n for n in push("this is not JSON") if n["tag"] != "grp_x"]
        assert [(n["title"], n["body"]) for n in unknown] == [("Parley", "New message")]

        # Opening a conversation in the app closes its notification (it is on screen now).
        a.get(f"{server.url}/#/c/grp_x")
        wait(a, lambda d: "grp_x" not in [n["tag"] for n in notifications(d)])

        # A click on a notification with the app open: the worker focuses the window and tells it where to go
        # (DevTools cannot click a notification; this is the page's half, the message the worker posts).
        a.execute_script("""navigator.serviceWorker.dispatchEvent(new MessageEvent('message', {data: {type: 'open', url: arguments[0]}}));
            navigator.serviceWorker.dispatchEvent(new MessageEvent('message', {data: {type: 'open', url: 'https://elsewhere.invalid/#/c/evil'}}));""",
                         f"{server.url}/#/c/dm_a_b")
        wait(a, lambda d: d.execute_script("return location.hash") == "#/c/dm_a_b")



def test_pushes_that_cross_on_the_way_end_as_the_newest_of_them_says(server, browsers):
    """A push service promises no order (RFC 8030; Firefox decrypts a burst of pushes concurrently): an edit,
    a delete or a read may reach the worker before the message it is about. What shows in the end is what
    the pushes in their sent order would show, and an edit never brings back a notification by itself."""
    with PushHarness(signed_in_with_a_service_worker(server, browsers), server) as harness:
        push, displayed, a = harness.push, harness.displayed, harness.driver
        conversation, base = DIRECT, dict(DIRECT_PUSH)

        # The edit first: nothing to update yet, and nothing shows; its message then shows with the edited text.
        assert push({**base, "kind": "update", "seq": 9, "body": "Lunch at one?"}) == []
        assert [(n["seq"], n["body"]) for n in push({**base, "kind": "message", "seq": 9, "body": "Lunch at noon?", "count": 1})] == [
            (9, "Lunch at one?")]

        # The same while an older message shows: its edit waits for it, the older one stays until it comes.
        assert [(n["seq"], n["body"]) for n in push({**base, "kind": "update", "seq": 10, "body": "Dinner at eight?"})] == [
            (9, "Lunch at one?")]
        assert [(n["seq"], n["body"]) for n in push({**base, "kind": "message", "seq": 10, "body": "Dinner at seven?", "count": 2})] == [
            (10, "Dinner at eight?")]

        # Deleted for everyone before its message came: the message never shows, the one shown stays.
        before = displayed()
        assert [(n["seq"], n["body"]) for n in push({**base, "kind": "withdraw", "seq": 11})] == [(10, "Dinner at eight?")]
        assert [(n["seq"], n["body"]) for n in push({**base, "kind": "message", "seq": 11, "body": "oops", "count": 3})] == [
            (10, "Dinner at eight?")]
        assert displayed() == before

        # Read elsewhere up to 13 before 12 and 13 came: the notification closes, and they never show.
        assert push({**base, "kind": "read", "seq": 13}) == []
        assert push({**base, "kind": "message", "seq": 12, "body": "twelve", "count": 1}) == []
        assert push({**base, "kind": "message", "seq": 13, "body": "thirteen", "count": 2}) == []
        assert displayed() == before
        # A message after what was read still alerts.
        assert [(n["seq"], n["body"]) for n in push({**base, "kind": "message", "seq": 14, "body": "fourteen", "count": 1})] == [
            (14, "fourteen")]

        # An edit of a message that is not shown, and whose push never comes (its notification was dismissed long
        # ago), shows nothing: a dismissed notification does not come back because its message was edited.
        assert push({**base, "conversationId": "grp_y", "url": "/#/c/grp_y", "kind": "update", "seq": 3, "body": "edited"}) == [
            {"title": "Ada Lovelace", "body": "fourteen", "tag": conversation, "seq": 14, "url": f"/#/c/{conversation}"}]

