"""Web Push for real: Firefox ESR (headless, driven over Marionette) subscribes through its own push
stack to the push service stand-in (pushservice.py, speaking Mozilla's autopush WebSocket protocol),
Parley pushes to the endpoint Firefox was given, and Parley's service worker shows the notification.

Chromium cannot do this on loopback (its push service is Google's FCM, reached over a private
protocol); Firefox takes any push server through `dom.push.serverURL`.
"""
import json
import re
import threading
import time
import uuid
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest
import requests

from marionette import Firefox, MarionetteError
from pushservice import b64url, encrypt_for, public_bytes, push_service, vapid_authorization  # noqa: F401 - a fixture

from cryptography.hazmat.primitives.asymmetric import ec


def push_prefs(service):
    """What Firefox needs to take pushes from the stand-in and show notifications headless."""
    return {
        "dom.push.enabled": True,
        "dom.push.connection.enabled": True,  # Marionette's recommended prefs turn it off otherwise
        "dom.push.serverURL": service.ws_url,
        "dom.push.testing.allowInsecureServerURL": True,  # ws:// (not wss://) to the stand-in
        "permissions.default.desktop-notification": 1,  # notifications allowed: no prompt in a headless browser
        "alerts.useSystemBackend": False,  # no D-Bus notification daemon here: Firefox's own alert windows
        "dom.push.loglevel": "debug",
        "devtools.console.stdout.chrome": True,
        "devtools.console.stdout.content": True,
    }


@pytest.fixture
def firefox(push_service, tmp_path):
    """Opens headless Firefox ESR on demand; its log (push debug included) is kept in tmp_path."""
    opened = []

    def open_firefox():
        browser = Firefox(push_prefs(push_service))
        opened.append(browser)
        return browser.driver

    yield open_firefox
    for number, browser in enumerate(opened):
        try:
            (tmp_path / f"firefox-{number}.log").write_text(browser.log_text())
        finally:
            browser.close()


def poll(condition, timeout=20, what="the condition"):
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except MarionetteError as error:  # e.g. a page between two documents
            last_error = error
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what() if callable(what) else what} "
                                 f"(last error: {last_error})")
        time.sleep(0.1)


def shown_notifications(driver):
    """The notifications the page's service worker registration shows now (null: no registration)."""
    return driver.run_promise("""
        const registration = await navigator.serviceWorker.getRegistration();
        if (!registration) return null;
        return (await registration.getNotifications()).map(n => ({title: n.title, body: n.body, tag: n.tag, data: n.data}));
    """)


def button_named(driver, name, timeout=15):
    """The visible button whose accessible name is `name` (as a screen reader would find it)."""
    def find():
        for element in driver.find_all("button"):
            try:
                if driver.accessible_name(element) == name and driver.execute(
                        "return arguments[0].checkVisibility ? arguments[0].checkVisibility() : !!arguments[0].offsetParent",
                        {"element-6066-11e4-a52e-4f735466cecf": element}):
                    return element
            except MarionetteError:
                continue
        return None
    return poll(find, timeout, f"a button named {name!r}")


def sign_in_and_turn_on_notifications(driver, server, session):
    driver.navigate(server.url + "/favicon.svg")
    driver.execute("localStorage.setItem('parley.session', arguments[0])",
                   json.dumps({"token": session["token"], "user": session["user"]}))
    driver.navigate(server.url + "/")
    poll(lambda: driver.execute("return !document.getElementById('app-view').hidden"), what="the app to open")
    driver.click(button_named(driver, "Account menu"))
    driver.click(button_named(driver, "Notifications"))
    driver.click(button_named(driver, "Turn on notifications"))
    poll(lambda: driver.execute("return document.getElementById('push-state').textContent") ==
         "Notifications are on for this device.", what="notifications to be on")
    driver.navigate(server.url + "/favicon.svg")  # the app goes; a bare page of the origin stays to look
    poll(lambda: websocket_count(server) == 0, what="the user to be offline")


def set_browser_offline(driver, offline):
    """Firefox's own offline switch: its push connection drops (and comes back, saying hello again)."""
    driver.set_context("chrome")
    try:
        driver.execute("Services.io.offline = arguments[0];", offline)
    finally:
        driver.set_context("content")


def assert_every_push_delivered(service):
    """Firefox acked each push as delivered (100), and no service worker failed on one (a nack:
    301 an exception, 302 a rejected promise, e.g. a showNotification that failed)."""
    service.wait_for(lambda: service.notifications and all(n.ack_code is not None for n in service.notifications),
                     what="Firefox to answer every push")
    with service.changed:
        acks = list(service.acks)
        pushed = [n for n in service.notifications if n.ack_code != -1]
    assert acks and all(kind == "ack" and code == 100 for _, _, code, kind in acks), f"acks: {acks}"
    assert all(n.ack_code == 100 for n in pushed), f"unacked pushes: {[n for n in pushed if n.ack_code != 100]}"


def api(server, session, method, path, body):
    response = requests.request(method, server.url + path, json=body, timeout=10,
                                headers={"Authorization": "Bearer " + session["token"]})
    assert response.ok, f"{method} {path} -> {response.status_code} {response.text}"
    return response.json() if response.content else None


def websocket_count(server):
    text = requests.get(server.url + "/metrics", timeout=5).text
    match = re.search(r"^parley_websocket_connections(?:\{[^}]*\})? ([0-9.]+)$", text, re.M)
    return int(float(match.group(1))) if match else 0


# MARK: the browser side alone

SITE_SW = """
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("push", (event) => {
  const data = event.data.json();
  event.waitUntil(self.registration.showNotification(data.title, {body: data.body, tag: data.tag}));
});
"""


@pytest.fixture
def probe_site(tmp_path):
    """A static page and service worker on loopback (no Parley)."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text("<!doctype html><title>push probe</title><p>probe</p>")
    (root / "sw.js").write_text(SITE_SW)
    handler = partial(type("Quiet", (SimpleHTTPRequestHandler,), {"log_message": lambda *a: None}), directory=str(root))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_firefox_takes_a_push_from_the_stand_in_without_parley(firefox, push_service, probe_site):
    """The browser half alone: if this fails, the trouble is Firefox or the stand-in, not Parley."""
    driver = firefox()
    driver.navigate(probe_site + "/index.html")
    application_key = ec.generate_private_key(ec.SECP256R1())
    subscription = driver.run_promise("""
        const [key] = args;
        const raw = Uint8Array.from(atob(key.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - key.length % 4) % 4)), c => c.charCodeAt(0));
        const registration = await navigator.serviceWorker.register('/sw.js');
        await navigator.serviceWorker.ready;
        const subscription = await registration.pushManager.subscribe({userVisibleOnly: true, applicationServerKey: raw});
        return subscription.toJSON();
    """, b64url(public_bytes(application_key)))
    assert subscription["endpoint"].startswith(push_service.url + "/push/")

    body = encrypt_for(subscription, json.dumps({"title": "Probe", "body": "it works", "tag": "probe"}).encode())
    response = requests.post(subscription["endpoint"], data=body, timeout=10, headers={
        "TTL": "60", "Content-Encoding": "aes128gcm", "Topic": "probe",
        "Authorization": vapid_authorization(application_key, push_service.url)})
    assert response.status_code == 201, response.status_code
    shown = poll(lambda: shown_notifications(driver), what="the notification")
    assert [(n["title"], n["body"], n["tag"]) for n in shown] == [("Probe", "it works", "probe")]
    assert_every_push_delivered(push_service)


# MARK: Parley's web client

def test_parley_pushes_to_firefox_and_the_service_worker_shows_one_notification_per_conversation(
        server, firefox, push_service):
    ada, bob = server.register("ada", "Ada Lovelace"), server.register("bob", "Bob Builder")
    conversation = server.send(ada, "hi Bob", recipient=bob["user"]["id"])["conversationId"]
    server.send(bob, "hello Ada", conversation=conversation)

    driver = firefox()
    # Bob turns notifications on, as a person would: the account menu, Notifications, the button;
    # then he leaves (the app's page goes, its WebSocket with it).
    sign_in_and_turn_on_notifications(driver, server, bob)
    channels = [c for c in push_service.channels.values() if not c.gone]
    assert len(channels) == 1, "Firefox registered one channel with the stand-in"
    assert channels[0].key is not None, "subscribed with the server's VAPID key"
    assert shown_notifications(driver) == []

    first = server.send(ada, "Are you coming tonight?", conversation=conversation)
    shown = poll(lambda: shown_notifications(driver), what="the first notification")
    assert [(n["title"], n["body"], n["tag"]) for n in shown] == [("Ada Lovelace", "Are you coming tonight?", conversation)]
    assert shown[0]["data"]["seq"] == first["seq"] and shown[0]["data"]["url"] == f"/#/c/{conversation}"

    second = server.send(ada, "Bring the cake!", conversation=conversation)
    shown = poll(lambda: (s := shown_notifications(driver)) and s[0]["data"]["seq"] == second["seq"] and s,
                 what="the second message's notification")
    assert [(n["title"], n["body"], n["tag"]) for n in shown] == [("Ada Lovelace", "Bring the cake!", conversation)], \
        "one notification per conversation: the second replaces the first"

    # Ada fixes her message: the notification changes its text (an "update" push).
    api(server, ada, "POST", f"/v1/conversations/{conversation}/messages/{second['seq']}/actions",
        {"clientId": str(uuid.uuid4()), "kind": "edit", "text": "Bring the cake, please!"})
    shown = poll(lambda: (s := shown_notifications(driver)) and s[0]["body"] == "Bring the cake, please!" and s,
                 what="the edited notification")
    assert [(n["title"], n["tag"]) for n in shown] == [("Ada Lovelace", conversation)]
    # Bob reads on his phone: the notification goes (a "read" push).
    api(server, bob, "POST", f"/v1/conversations/{conversation}/receipts", {"readSeq": second["seq"]})
    poll(lambda: shown_notifications(driver) == [], what="the notification to close after reading elsewhere")

    assert_every_push_delivered(push_service)


@pytest.mark.parametrize("newest_first", [False, True], ids=["oldest first", "newest first"])
def test_pushes_kept_while_firefox_was_away_still_show_the_message(server, firefox, push_service, newest_first):
    """A push service keeps only the newest push of a Topic for a browser that is away (RFC 8030
    5.4). Whatever the newest of a conversation is, the browser must end up showing the message, in
    whichever order the kept pushes come (a push service promises none)."""
    push_service.kept_pushes_newest_first = newest_first
    ada, bob = server.register("ada", "Ada Lovelace"), server.register("bob", "Bob Builder")
    conversation = server.send(ada, "hi Bob", recipient=bob["user"]["id"])["conversationId"]
    server.send(bob, "hello Ada", conversation=conversation)
    driver = firefox()
    sign_in_and_turn_on_notifications(driver, server, bob)

    set_browser_offline(driver, True)
    push_service.wait_for(lambda: not push_service.connections, what="Firefox's push connection to drop")
    message = server.send(ada, "Lunch at noon?", conversation=conversation)
    push_service.wait_for(lambda: push_service.notifications, what="the push to reach the push service")
    api(server, ada, "POST", f"/v1/conversations/{conversation}/messages/{message['seq']}/actions",
        {"clientId": str(uuid.uuid4()), "kind": "edit", "text": "Lunch at one?"})
    push_service.wait_for(lambda: len(push_service.notifications) == 2, what="the edit's push to reach the push service")
    set_browser_offline(driver, False)

    push_service.wait_for(lambda: push_service.connections, what="Firefox to come back")
    # Only the message's push has a Topic, so both reach the browser: the message and its update, in the
    # order asked (the service worker handles one push at a time). Firefox lists a notification a moment after
    # showing it, so the message's own notification may be seen first: wait for the final one.
    expected = [("Ada Lovelace", "Lunch at one?", conversation)]
    poll(lambda: [(n["title"], n["body"], n["tag"]) for n in shown_notifications(driver)] == expected, what=lambda: (
        f"the edited notification; shown: {[(n['title'], n['body']) for n in shown_notifications(driver)]}; "
        "the pushes the browser was given (a replaced one has ack -1): "
        f"{[(n.topic, n.sent, n.ack_code) for n in push_service.notifications]}"))
    assert_every_push_delivered(push_service)
    shown = shown_notifications(driver)
    assert [(n["title"], n["body"], n["tag"]) for n in shown] == expected, "and it stays"
