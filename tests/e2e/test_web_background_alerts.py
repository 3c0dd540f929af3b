"""The web client's own notifications while its tab is in the background: the server pushes nothing
to a user with a live connection, so a Parley tab left open behind another shows what a push would
have shown, through the service worker's registration and in the push's shape (tag, data), following
the user's preview and each conversation's level and mute; an edit updates it, a delete for everyone
or a read closes it, and the page closes what it showed when it is in front again.

The app's tab is made hidden the way a person leaves it: another tab opened in front of it (headless
Chromium hides a tab behind another once focus emulation, which keeps a page "visible", is off for
it); its `document.visibilityState` is read over DevTools, without bringing it to the front. The tab in
front is a page of the same site (its favicon), from which the service worker's notifications are
read. Every check waits for a condition with a deadline; absences are asserted behind a later
notification (a sentinel) that the page can only show after deciding about the earlier messages, since
it handles the stream's events in order."""
import json
import uuid

import pytest
import requests
import websocket
from selenium.webdriver.common.keys import Keys

from conftest import sign_in
from test_web_notifications import (FAKE_PUSH, before_the_app, by_id, inbox, make_chats, open_settings, press,  # noqa: F401 (inbox: a fixture)
                                    push_state, set_notification_permission, toggle, wait, wait_for)

# Every notification the page has shown (its showNotification resolved), kept in localStorage (shared
# by the site's tabs): the test waits on it before reading what shows, because Chrome may drop a
# notification that is being shown while the notifications are listed (sw.js says so too), and it
# also sees notifications that were shown and replaced or closed since.
RECORD_SHOWS = """
(() => {
  if (!window.ServiceWorkerRegistration) return;
  const original = ServiceWorkerRegistration.prototype.showNotification;
  ServiceWorkerRegistration.prototype.showNotification = function (title, options) {
    return original.call(this, title, options).then((result) => {
      const log = JSON.parse(localStorage.getItem("__shown") || "[]");
      log.push({ title, body: options?.body, tag: options?.tag, seq: options?.data?.seq ?? null,
                 renotify: options?.renotify ?? null, silent: options?.silent ?? null });
      localStorage.setItem("__shown", JSON.stringify(log));
      return result;
    });
  };
})();
"""


def headers(session):
    return {"Authorization": "Bearer " + session["token"]}


def act(server, session, conversation, seq, kind, **fields):
    response = requests.post(f"{server.url}/v1/conversations/{conversation}/messages/{seq}/actions",
                             json={"clientId": str(uuid.uuid4()), "kind": kind, **fields}, headers=headers(session), timeout=10)
    assert response.ok, response.text
    return response.json()["message"]


class App:
    """Alice's app, signed in with notifications granted; `background()` opens another tab in front of it."""

    def __init__(self, driver, server, session, inbox, turn_on=True):
        self.driver, self.server = driver, server
        before_the_app(driver, FAKE_PUSH % {"origin": json.dumps(server.url), "endpoint": json.dumps(inbox.url + "/push/alice")})
        before_the_app(driver, RECORD_SHOWS)
        set_notification_permission(driver, server, "granted")
        sign_in(driver, server, session)
        wait(driver, lambda d: d.find_elements("css selector", "#conversation-list li"))
        if turn_on:
            open_settings(driver)
            wait(driver, lambda d: push_state(d) == "Notifications are off on this device.")
            toggle(driver).click()
            wait(driver, lambda d: push_state(d) == "Notifications are on for this device.")
            press(driver, Keys.ESCAPE)
            wait(driver, lambda d: by_id(d, "notifications-dialog").get_attribute("open") is None)
        self.tab = driver.current_window_handle
        self.front = None

    def background(self):
        """Another tab (a page of the same site) in front: the app's tab is hidden."""
        driver = self.driver
        assert self.state()["visibility"] == "visible"
        driver.execute_cdp_cmd("Emulation.setFocusEmulationEnabled", {"enabled": False})
        driver.switch_to.new_window("tab")
        driver.get(self.server.url + "/favicon.svg")
        self.front = driver.current_window_handle
        wait_for(lambda: self.state()["visibility"] == "hidden", timeout=10, message="the app's tab to be hidden")

    def back(self):
        """The app's tab in front again (focused, as a person looking at it)."""
        driver = self.driver
        driver.switch_to.window(self.tab)
        driver.execute_cdp_cmd("Emulation.setFocusEmulationEnabled", {"enabled": True})
        wait_for(lambda: self.state()["visibility"] == "visible", timeout=10, message="the app's tab to be visible")

    def evaluate(self, expression, gesture=False):
        """Runs `expression` in the app's tab over DevTools, without bringing it to the front."""
        address = self.driver.capabilities["goog:chromeOptions"]["debuggerAddress"]
        target = next(t for t in requests.get(f"http://{address}/json", timeout=5).json() if t["id"] == self.tab)
        socket = websocket.create_connection(target["webSocketDebuggerUrl"], timeout=10, suppress_origin=True)
        try:
            socket.send(json.dumps({"id": 1, "method": "Runtime.evaluate",
                                    "params": {"expression": expression, "returnByValue": True, "awaitPromise": True, "userGesture": gesture}}))
            while True:
                message = json.loads(socket.recv())
                if message.get("id") == 1:
                    result = message["result"]
                    assert "exceptionDetails" not in result, result
                    return result["result"].get("value")
        finally:
            socket.close()

    def state(self):
        return self.evaluate("({visibility: document.visibilityState, hash: location.hash,"
                             " announced: document.getElementById('announcer').textContent})")

    def notifications(self):
        """What shows now (read in whichever tab is in front), each with its whole `data`."""
        shown = self.driver.execute_async_script("""const done = arguments[arguments.length - 1];
            navigator.serviceWorker.ready.then((r) => r.getNotifications())
              .then((list) => done(list.map((n) => ({title: n.title, body: n.body, tag: n.tag, renotify: n.renotify, silent: n.silent,
                                                     icon: n.icon, data: n.data}))))
              .catch((error) => done(String(error)));""")
        assert not isinstance(shown, str), shown
        return sorted(shown, key=lambda n: n["tag"])

    def of(self, conversation):
        return [n for n in self.notifications() if n["tag"] == conversation]

    def shows(self, conversation, body):
        """Waits until the page has shown the conversation's notification saying `body`; then it, as it shows."""
        wait_for(lambda: any(e["tag"] == conversation and e["body"] == body for e in self.log()), timeout=15,
                 message=f"a notification of {conversation} saying {body!r}")
        shown = [n for n in self.of(conversation) if n["body"] == body]
        assert shown, f"{conversation}'s notification does not say {body!r}: {self.notifications()}"
        return shown[0]

    def closed(self, conversation):
        wait_for(lambda: not self.of(conversation), timeout=15, message=f"{conversation}'s notification to close")

    def log(self, conversation=None):
        """Every notification shown so far (of one conversation)."""
        log = json.loads(self.driver.execute_script("return localStorage.getItem('__shown') || '[]'"))
        return [entry for entry in log if conversation is None or entry["tag"] == conversation]


def unread_total(server, session):
    """The user's total unread, as the server counts it (a push's `badge`)."""
    total = 0
    for summary in server.conversations(session):
        if summary["kind"] == "group":
            total += summary.get("unreadCount", 0)
        else:
            me = next(m for m in summary["members"] if m["userId"] == session["user"]["id"])
            total += summary["lastSeq"] - me["readSeq"]
    return total


def test_a_message_while_the_tab_is_hidden_shows_what_a_push_would_one_per_conversation(server, browsers, inbox):
    alice, bob, carol, direct, group = make_chats(server)
    app = App(browsers(), server, alice, inbox)

    # In front, the page shows the message itself: no notification.
    server.send(bob, "You are looking at this", conversation=direct)
    wait_for(lambda: "You are looking at this" in app.state()["announced"], message="the message to reach the page")

    app.background()
    message = server.send(bob, "Are you there?", conversation=direct)
    shown = app.shows(direct, "Are you there?")
    assert shown == {"title": "Bob", "body": "Are you there?", "tag": direct, "renotify": True, "silent": False,
                     "icon": server.url + "/favicon.svg",
                     "data": {"v": 1, "kind": "message", "conversationId": direct, "seq": message["seq"], "title": "Bob",
                              "body": "Are you there?", "count": 1, "badge": unread_total(server, alice), "url": f"/#/c/{direct}"}}
    assert [(e["tag"], e["seq"]) for e in app.log()] == [(direct, message["seq"])], "the message seen in front was not notified"

    # A second message: still one notification for the conversation, with the newer text.
    second = server.send(bob, "Hello?", conversation=direct)
    shown = app.shows(direct, "Hello?")
    assert len(app.of(direct)) == 1
    assert shown["data"]["seq"] == second["seq"] and shown["data"]["count"] == 2 and shown["renotify"]

    # A group: titled with the group, "Sender: text", the text cut to 180 characters like a push's.
    long_text = "Chapter one starts slowly. " * 10
    server.send(carol, long_text.strip(), conversation=group)
    cut = long_text.strip()[:179] + "…"
    shown = app.shows(group, f"Carol: {cut}")
    assert shown["title"] == "Book club" and shown["data"]["url"] == f"/#/c/{group}"
    assert [n["tag"] for n in app.notifications()] == sorted([direct, group])
    assert app.state()["hash"] == "", "nothing was opened"
    assert inbox.received == [], "the server pushed nothing (Alice is connected): the page showed these"

    # In front again: what the page showed closes.
    app.back()
    wait_for(lambda: app.notifications() == [], timeout=15, message="the notifications to close")


@pytest.mark.parametrize("preview, direct_says, group_says", [
    ("sender", ("Bob", "New message"), ("Book club", "New message from Carol")),
    ("none", ("Parley", "New message"), ("Parley", "New message")),
])
def test_what_a_notification_says_follows_the_preview(server, browsers, inbox, preview, direct_says, group_says):
    alice, bob, carol, direct, group = make_chats(server)
    server.rest(alice, "PUT", "/v1/notifications", {"preview": preview}).raise_for_status()
    app = App(browsers(), server, alice, inbox)
    app.background()
    server.send(bob, "The secret plan", conversation=direct)
    server.send(carol, "More secrets", conversation=group)
    expected = ((direct, direct_says), (group, group_says))
    # Both shown before any is listed: Chrome may drop a notification being shown while they are listed.
    wait_for(lambda: all(app.log(conversation) and app.log(conversation)[-1]["body"] == body for conversation, (_, body) in expected),
             timeout=15, message="both notifications shown")
    for conversation, (title, body) in expected:
        shown = app.shows(conversation, body)
        assert shown["title"] == title and shown["data"]["title"] == title and shown["data"]["body"] == body
    assert not any("secret" in (n["title"] + n["body"]).lower() for n in app.notifications())


def test_muted_off_and_mentions_only_conversations_and_my_own_messages(server, browsers, inbox):
    alice, bob, carol, direct, group = make_chats(server)
    dave = server.register("dave", "Dave")
    with_dave = server.send(dave, "Hi Alice, Dave here", recipient=alice["user"]["id"])["conversationId"]
    with_carol = server.send(carol, "Hi Alice, Carol here", recipient=alice["user"]["id"])["conversationId"]
    server.rest(alice, "PUT", f"/v1/conversations/{direct}/notifications", {"mute": "8h"}).raise_for_status()
    server.rest(alice, "PUT", f"/v1/conversations/{with_dave}/notifications", {"level": "none"}).raise_for_status()
    server.rest(alice, "PUT", f"/v1/conversations/{group}/notifications", {"level": "mentions"}).raise_for_status()
    app = App(browsers(), server, alice, inbox)
    app.background()

    server.send(bob, "Muted chat says hi", conversation=direct)
    server.send(dave, "Nobody hears me", conversation=with_dave)
    server.send(carol, "Nothing for Alice here", conversation=group)
    server.send(alice, "Me, from my phone", conversation=group)
    server.send(carol, "First sentinel", conversation=with_carol)
    app.shows(with_carol, "First sentinel")
    assert [n["tag"] for n in app.notifications()] == [with_carol]
    assert [e["tag"] for e in app.log()] == [with_carol], "nothing else was ever shown"

    # Mentions only: the message that @mentions Alice notifies.
    mention = server.send(carol, "@alice what do you think?", conversation=group)
    assert alice["user"]["id"] in mention.get("mentions", [])
    app.shows(group, "Carol: @alice what do you think?")

    # Alice writes in the group from another device: what the notification showed is seen; it closes.
    server.send(alice, "I think yes", conversation=group)
    app.closed(group)
    assert [n["tag"] for n in app.of(with_carol)] == [with_carol], "another conversation's stays"


def test_an_edit_updates_it_silently_a_delete_or_a_read_elsewhere_closes_it(server, browsers, inbox):
    alice, bob, carol, direct, group = make_chats(server)
    app = App(browsers(), server, alice, inbox)
    app.background()

    first = server.send(bob, "Lunch at noon?", conversation=direct)
    message = server.send(bob, "See you at 5", conversation=direct)
    app.shows(direct, "See you at 5")

    # An edit of another message, or a reaction to the one shown, changes nothing; an edit of it, its text (no alert).
    act(server, bob, direct, first["seq"], "edit", text="Lunch at one?")
    act(server, bob, direct, message["seq"], "react", emoji="👍")
    act(server, bob, direct, message["seq"], "edit", text="See you at 6")
    shown = app.shows(direct, "See you at 6")
    assert shown["data"]["seq"] == message["seq"] and shown["data"]["kind"] == "message" and shown["data"]["body"] == "See you at 6"
    assert shown["silent"] and not shown["renotify"]
    bodies = [e["body"] for e in app.log(direct)]
    assert bodies[-2:] == ["See you at 5", "See you at 6"] and bodies.count("See you at 5") == 1, bodies
    assert "Lunch at one?" not in bodies, "an edit of a message not shown shows nothing"

    # Deleted for everyone: it closes.
    act(server, bob, direct, message["seq"], "delete")
    app.closed(direct)

    # Read on another device up to it: it closes; read up to before it would not have.
    later = server.send(bob, "Still there?", conversation=direct)
    app.shows(direct, "Still there?")
    requests.post(f"{server.url}/v1/conversations/{direct}/receipts", json={"readSeq": later["seq"] - 1}, headers=headers(alice),
                  timeout=10).raise_for_status()
    server.send(carol, "Sentinel", conversation=group)
    app.shows(group, "Carol: Sentinel")
    assert [n["body"] for n in app.of(direct)] == ["Still there?"]
    requests.post(f"{server.url}/v1/conversations/{direct}/receipts", json={"readSeq": later["seq"]}, headers=headers(alice),
                  timeout=10).raise_for_status()
    app.closed(direct)


def test_nothing_shows_while_notifications_are_off_in_this_browser(server, browsers, inbox):
    alice, bob, carol, direct, group = make_chats(server)
    app = App(browsers(), server, alice, inbox, turn_on=False)
    app.background()
    server.send(bob, "Anyone home?", conversation=direct)
    wait_for(lambda: "Anyone home?" in app.state()["announced"], message="the message to reach the page")

    # Turned on in the hidden tab (its dialog, clicked over DevTools), then a sentinel: the message before stayed silent.
    app.evaluate("document.getElementById('menu-button').click(); document.getElementById('notification-settings').click()")
    wait_for(lambda: app.evaluate("document.getElementById('push-state').textContent") == "Notifications are off on this device.",
             message="the settings dialog")
    app.evaluate("document.getElementById('push-toggle').click()", gesture=True)
    wait_for(lambda: app.evaluate("document.getElementById('push-state').textContent") == "Notifications are on for this device.",
             message="notifications on")
    server.send(carol, "Sentinel", conversation=group)
    app.shows(group, "Carol: Sentinel")
    assert [e["tag"] for e in app.log()] == [group]
