"""Web Push end to end against a real `parley serve --push-allow-loopback`: subscriptions registered
over REST with keys the test holds, pointing at a push service on loopback (pushservice.py) that
checks every request's VAPID and decrypts every payload. SPEC: docs/protocol.md "Notifications".

Saying that something was NOT pushed needs a gate, not a sleep: `Witness.settle()` sends two
messages, one after the other, to a second offline user and waits for each push. The dispatcher
works in rounds (claim the users with events due, push for all of them, sleep, again): the first
witness push comes from a round that already saw every earlier event, and the second from a later
round, which starts only after that one finished. So once `settle()` returns, every event written
before it has been planned, and whatever it pushed has reached the push service.
"""
import json
import re
import time
import uuid

import pytest
import requests
from websockets.sync.client import connect

from pushservice import push_service, unb64url  # noqa: F401 - push_service is a fixture

ALWAYS = 253402300799000


# MARK: helpers

def api(server, session, method, path, body=None, expect=None):
    response = requests.request(method, server.url + path, json=body, timeout=10,
                                headers={"Authorization": "Bearer " + session["token"]})
    if expect is not None:
        assert response.status_code == expect, f"{method} {path} {body} -> {response.status_code} {response.text}"
    return response


def register(server, username, display_name):
    return server.register(username, display_name)


def uid(session):
    return session["user"]["id"]


def direct(server, a, b):
    """Their direct conversation, made by a message each way (so either may add the other to a group)."""
    conversation = server.send(a, f"hi {b['user']['username']}", recipient=uid(b))["conversationId"]
    server.send(b, "hello", conversation=conversation)
    return conversation


def create_group(server, owner, title, members):
    response = api(server, owner, "POST", "/v1/groups",
                   {"clientId": str(uuid.uuid4()), "title": title, "memberIds": [uid(m) for m in members]}, expect=201)
    return response.json()["conversation"]["id"]


def subscribe(server, session, service):
    """A subscription with test-held keys, registered for `session`'s user; the server's VAPID key is
    then the only one the push service accepts."""
    config = api(server, session, "GET", "/v1/push/config", expect=200).json()
    service.expected_vapid_key = config["vapidPublicKey"]
    subscription = service.subscribe()
    api(server, session, "POST", "/v1/push/subscriptions", subscription.to_json(), expect=204)
    return subscription


def set_preview(server, session, preview):
    response = api(server, session, "PUT", "/v1/notifications", {"preview": preview}, expect=200)
    assert response.json()["preview"] == preview


def set_conversation(server, session, conversation, **body):
    return api(server, session, "PUT", f"/v1/conversations/{conversation}/notifications", body, expect=200).json()


def act(server, session, conversation, seq, kind, **extra):
    return api(server, session, "POST", f"/v1/conversations/{conversation}/messages/{seq}/actions",
               {"clientId": str(uuid.uuid4()), "kind": kind, **extra}, expect=200).json()


def metric(server, name):
    text = requests.get(server.url + "/metrics", timeout=5).text
    match = re.search(rf"^{name}(?:\{{[^}}]*\}})? ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def gate(condition, timeout=20, what="the condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


class Online:
    """A live WebSocket of `session`'s user (the server counts them online while it is open)."""

    def __init__(self, server, session):
        self._connection = connect(server.url.replace("http://", "ws://") + "/v1/ws", open_timeout=10)
        self.ws = self._connection.__enter__()
        self.ws.send(json.dumps({"type": "hello", "token": session["token"]}))
        deadline = time.monotonic() + 15
        while True:
            frame = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if frame["type"] == "error":
                raise AssertionError(f"hello refused: {frame}")
            if frame["type"] == "synced":
                return

    def close(self):
        self._connection.__exit__(None, None, None)


class Witness:
    """Two more users; `settle()` (see the module's doc) returns once every earlier event is planned."""

    def __init__(self, server, service):
        self.server = server
        self.service = service
        self.sender = register(server, "walter", "Walter White")
        self.receiver = register(server, "wendy", "Wendy Darling")
        self.conversation = direct(server, self.sender, self.receiver)
        self.subscription = subscribe(server, self.receiver, service)

    def settle(self):
        for n in range(2):
            seq = self.server.send(self.sender, f"tick {n}", conversation=self.conversation)["seq"]
            self.service.wait_for_push(self.subscription, lambda p, seq=seq: p["kind"] == "message" and p["seq"] == seq,
                                       what=f"the witness's push of seq {seq}")


# MARK: the REST contract

def test_push_config_subscriptions_and_notification_settings(server, push_service):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    conversation = direct(server, ada, bob)

    config = api(server, ada, "GET", "/v1/push/config", expect=200).json()
    assert config["apns"] is False
    key = unb64url(config["vapidPublicKey"])
    assert len(key) == 65 and key[0] == 4, "an uncompressed P-256 point"
    assert "=" not in config["vapidPublicKey"], "base64url without padding"
    assert requests.get(server.url + "/v1/push/config", timeout=10).status_code == 401

    subscription = push_service.subscribe()
    api(server, ada, "POST", "/v1/push/subscriptions", subscription.to_json(), expect=204)
    api(server, ada, "POST", "/v1/push/subscriptions", subscription.to_json(), expect=204)  # again: fine
    good = subscription.to_json()
    for bad in [
        {**good, "endpoint": "http://example.com/push/1"},  # loopback is allowed, plain http elsewhere is not
        {**good, "endpoint": "ftp://127.0.0.1/push/1"},
        {**good, "endpoint": "not a url"},
        {**good, "keys": {"p256dh": good["keys"]["p256dh"][:-4], "auth": good["keys"]["auth"]}},
        {**good, "keys": {"p256dh": good["keys"]["p256dh"], "auth": "AAAA"}},
    ]:
        response = api(server, ada, "POST", "/v1/push/subscriptions", bad)
        assert response.status_code == 400, (bad, response.status_code, response.text)
        assert response.json()["error"]["code"] == "invalid_push_subscription", response.text
    for malformed in [{**good, "keys": {"auth": good["keys"]["auth"]}}, {"endpoint": good["endpoint"]}]:
        response = api(server, ada, "POST", "/v1/push/subscriptions", malformed)  # a missing field: the body's shape
        assert response.status_code == 400, (malformed, response.status_code, response.text)
        assert response.json()["error"]["code"] in ("invalid_json", "invalid_push_subscription"), response.text
    api(server, bob, "DELETE", "/v1/push/subscriptions", {"endpoint": subscription.endpoint}, expect=404)  # not bob's
    api(server, ada, "DELETE", "/v1/push/subscriptions", {"endpoint": subscription.endpoint}, expect=204)
    api(server, ada, "DELETE", "/v1/push/subscriptions", {"endpoint": subscription.endpoint}, expect=404)

    assert api(server, ada, "GET", "/v1/notifications", expect=200).json() == {"preview": "full", "conversations": []}
    assert api(server, ada, "PUT", "/v1/notifications", {"preview": "sender"}, expect=200).json() == \
        {"preview": "sender", "conversations": []}
    assert api(server, ada, "PUT", "/v1/notifications", {"preview": "loud"}).status_code == 400
    assert set_conversation(server, ada, conversation, level="mentions") == \
        {"conversationId": conversation, "level": "mentions", "mutedUntil": None}
    muted = set_conversation(server, ada, conversation, mute="8h")
    assert muted["level"] == "mentions"
    assert abs(muted["mutedUntil"] - (time.time() + 8 * 3600) * 1000) < 60_000
    assert set_conversation(server, ada, conversation, mute="always")["mutedUntil"] == ALWAYS
    week = set_conversation(server, ada, conversation, mute="1w")["mutedUntil"]
    assert abs(week - (time.time() + 7 * 86400) * 1000) < 60_000
    settings = api(server, ada, "GET", "/v1/notifications", expect=200).json()
    assert settings == {"preview": "sender", "conversations": [
        {"conversationId": conversation, "level": "mentions", "mutedUntil": week}]}
    assert set_conversation(server, ada, conversation, level="all", mute="off") == \
        {"conversationId": conversation, "level": "all", "mutedUntil": None}
    assert api(server, ada, "GET", "/v1/notifications", expect=200).json()["conversations"] == []
    assert api(server, ada, "PUT", f"/v1/conversations/{conversation}/notifications", {"level": "some"}).status_code == 400
    assert api(server, ada, "PUT", f"/v1/conversations/{conversation}/notifications", {"mute": "2d"}).status_code == 400
    carol = register(server, "carol", "Carol Danvers")
    assert api(server, carol, "PUT", f"/v1/conversations/{conversation}/notifications", {"level": "none"}).status_code == 404


# MARK: who is pushed

def test_an_offline_user_is_pushed_an_online_one_is_not_and_never_the_sender(server, push_service):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    conversation = direct(server, ada, bob)
    witness = Witness(server, push_service)
    ada_subscription = subscribe(server, ada, push_service)
    bob_subscription = subscribe(server, bob, push_service)
    server_key = push_service.expected_vapid_key

    online = Online(server, bob)
    server.send(ada, "while you are here", conversation=conversation)
    witness.settle()
    assert bob_subscription.requests() == [], "bob was online: the message was not to be pushed"
    online.close()
    gate(lambda: metric(server, "parley_websocket_connections") == 0, what="bob's socket to close")

    message = server.send(ada, "and now you are away", conversation=conversation)
    request = push_service.wait_for_request(bob_subscription, what="bob's push")
    payload = request.payload
    assert payload == {"v": 1, "kind": "message", "conversationId": conversation, "seq": message["seq"],
                       "title": "Ada Lovelace", "body": "and now you are away", "count": payload["count"],
                       "badge": payload["badge"], "url": f"/#/c/{conversation}"}, payload
    assert payload["count"] >= 1 and payload["badge"] >= 1
    # The request as RFC 8030/8291/8292 have it (the push service checked the JWT's signature, aud, exp).
    assert request.headers["content-encoding"] == "aes128gcm"
    assert int(request.ttl) > 0
    assert request.urgency in ("normal", "high")
    assert request.topic
    assert request.vapid_key == server_key
    assert request.vapid_claims["sub"] == "mailto:admin@parley.invalid"
    assert request.vapid_claims["aud"] == push_service.url

    witness.settle()
    assert [p["seq"] for p in bob_subscription.pushes()] == [message["seq"]], "only the message sent while away"
    assert ada_subscription.requests() == [], "the sender is never pushed her own messages"


@pytest.mark.parametrize("preview, direct_words, group_words", [
    ("full", ("Ada Lovelace", "hello there"), ("Engines", "Ada Lovelace: hello all")),
    ("sender", ("Ada Lovelace", "New message"), ("Engines", "New message from Ada Lovelace")),
    ("none", ("Parley", "New message"), ("Parley", "New message")),
])
def test_the_preview_level_words_the_push(server, push_service, preview, direct_words, group_words):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    conversation = direct(server, ada, bob)
    group = create_group(server, ada, "Engines", [bob])
    subscription = subscribe(server, bob, push_service)
    set_preview(server, bob, preview)

    seq = server.send(ada, "hello there", conversation=conversation)["seq"]
    payload = push_service.wait_for_push(subscription, lambda p: p["conversationId"] == conversation and p["seq"] == seq)
    assert (payload["title"], payload["body"]) == direct_words, payload

    seq = server.send(ada, "hello all", conversation=group)["seq"]
    payload = push_service.wait_for_push(subscription, lambda p: p["conversationId"] == group and p["seq"] == seq)
    assert (payload["title"], payload["body"]) == group_words, payload
    if preview != "full":
        assert all("hello" not in p["body"] for p in subscription.pushes()), "the text stays off the push"


def test_muted_and_level_none_are_not_pushed_and_mentions_only_with_an_at_mention(server, push_service):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    conversation = direct(server, ada, bob)
    quiet = create_group(server, ada, "Quiet room", [bob])
    busy = create_group(server, ada, "Busy room", [bob])
    witness = Witness(server, push_service)
    subscription = subscribe(server, bob, push_service)
    set_conversation(server, bob, conversation, mute="8h")
    set_conversation(server, bob, quiet, level="none")
    set_conversation(server, bob, busy, level="mentions")

    server.send(ada, "muted", conversation=conversation)
    server.send(ada, "nobody listens here", conversation=quiet)
    server.send(ada, "chatter without a mention", conversation=busy)
    server.send(ada, "an email like ada@bob.example is no mention", conversation=busy)
    mention = server.send(ada, "@bob look at this", conversation=busy)
    payload = push_service.wait_for_push(subscription, lambda p: p["conversationId"] == busy, what="the mention's push")
    witness.settle()
    assert [(p["conversationId"], p["seq"]) for p in subscription.pushes()] == [(busy, mention["seq"])], subscription.pushes()
    assert payload["title"] == "Busy room" and payload["body"] == "Ada Lovelace: @bob look at this"

    # Unmuted, the direct conversation pushes again (it was the mute that held it back).
    set_conversation(server, bob, conversation, mute="off")
    seq = server.send(ada, "unmuted", conversation=conversation)["seq"]
    payload = push_service.wait_for_push(subscription, lambda p: p["conversationId"] == conversation)
    assert payload["seq"] == seq and payload["body"] == "unmuted"


def test_group_entries_never_alert(server, push_service):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    grace = register(server, "grace", "Grace Hopper")
    direct(server, ada, bob)
    direct(server, ada, grace)
    witness = Witness(server, push_service)
    subscription = subscribe(server, bob, push_service)

    group = create_group(server, ada, "Engines", [bob])  # bob is a contact: added, not invited
    api(server, ada, "POST", f"/v1/conversations/{group}/title", {"clientId": str(uuid.uuid4()), "title": "Analytical Engines"},
        expect=201)
    api(server, ada, "POST", f"/v1/conversations/{group}/members", {"clientId": str(uuid.uuid4()), "userIds": [uid(grace)]},
        expect=201)
    witness.settle()
    assert subscription.requests() == [], "joins, renames and adds are entries: they never alert"

    seq = server.send(ada, "welcome, both", conversation=group)["seq"]
    payload = push_service.wait_for_push(subscription)
    assert (payload["seq"], payload["count"], payload["title"], payload["body"]) == \
        (seq, 1, "Analytical Engines", "Ada Lovelace: welcome, both"), payload


def test_an_invitation_alerts(server, push_service):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    subscription = subscribe(server, bob, push_service)
    group = create_group(server, ada, "Trip", [bob])  # not a contact: bob is invited
    payload = push_service.wait_for_push(subscription)
    assert (payload["kind"], payload["conversationId"], payload["title"], payload["body"]) == \
        ("message", group, "Trip", "Ada Lovelace invited you"), payload


def test_fifty_messages_to_an_offline_user_collapse_per_conversation(server, push_service):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    grace = register(server, "grace", "Grace Hopper")
    conversation = direct(server, ada, bob)
    other = direct(server, grace, bob)
    subscription = subscribe(server, bob, push_service)

    seqs = [server.send(ada, f"message {n}", conversation=conversation)["seq"] for n in range(50)]
    push_service.wait_for_push(subscription, lambda p: p["seq"] == seqs[-1], timeout=30, what="the push of the 50th message")
    other_seq = server.send(grace, "another conversation", conversation=other)["seq"]
    push_service.wait_for_push(subscription, lambda p: p["conversationId"] == other and p["seq"] == other_seq)

    requests_ = [r for r in subscription.requests() if r.accepted]
    ours = [r for r in requests_ if r.payload["conversationId"] == conversation]
    assert ours[-1].payload["seq"] == seqs[-1] and ours[-1].payload["body"] == "message 49"
    assert [r.payload["seq"] for r in ours] == sorted({r.payload["seq"] for r in ours}), "newer pushes carry newer messages"
    assert sum(r.payload["count"] for r in ours) == 50, [(r.payload["seq"], r.payload["count"]) for r in ours]
    assert len(ours) < 50, "messages that arrive together are pushed together"
    assert len({r.topic for r in ours}) == 1, {r.topic for r in ours}
    assert ours[0].topic, "a Topic, so the push service keeps only the newest while the browser is away"
    theirs = [r for r in requests_ if r.payload["conversationId"] == other]
    assert theirs[0].topic != ours[0].topic, "each conversation has its own topic"


def test_reading_editing_and_deleting_elsewhere_tidy_the_notification(server, push_service):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    conversation = direct(server, ada, bob)
    subscription = subscribe(server, bob, push_service)

    first = server.send(ada, "frist", conversation=conversation)["seq"]
    push_service.wait_for_push(subscription, lambda p: p["kind"] == "message" and p["seq"] == first)
    act(server, ada, conversation, first, "edit", text="first")
    update = push_service.wait_for_push(subscription, lambda p: p["kind"] == "update", what="an update push")
    assert (update["conversationId"], update["seq"], update["body"]) == (conversation, first, "first"), update
    act(server, ada, conversation, first, "delete")
    withdraw = push_service.wait_for_push(subscription, lambda p: p["kind"] == "withdraw", what="a withdraw push")
    assert (withdraw["conversationId"], withdraw["seq"]) == (conversation, first), withdraw

    second = server.send(ada, "second", conversation=conversation)["seq"]
    push_service.wait_for_push(subscription, lambda p: p["kind"] == "message" and p["seq"] == second)
    online = Online(server, bob)  # tidying up goes to every device, online or not
    try:
        api(server, bob, "POST", f"/v1/conversations/{conversation}/receipts", {"readSeq": second}, expect=200)
        read = push_service.wait_for_push(subscription, lambda p: p["kind"] == "read", what="a read push")
    finally:
        online.close()
    assert (read["conversationId"], read["seq"]) == (conversation, second), read
    topics = {r.topic for r in subscription.requests() if r.accepted and r.payload and r.payload["kind"] == "message"}
    assert len(topics) == 1 and None not in topics, f"every message push of the conversation has its topic: {topics}"
    tidy = [r.topic for r in subscription.requests() if r.accepted and r.payload and r.payload["kind"] != "message"]
    assert tidy and all(topic is None for topic in tidy), "a tidy-up has no topic: it would replace the message push it tidies"


# MARK: the push service's answers

@pytest.mark.parametrize("status", [410, 404])
def test_a_gone_or_unknown_subscription_is_removed(server, push_service, status):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    conversation = direct(server, ada, bob)
    gone, kept = subscribe(server, bob, push_service), subscribe(server, bob, push_service)
    push_service.respond(gone, status)
    removed = metric(server, "parley_push_targets_removed_total")

    first = server.send(ada, "one", conversation=conversation)["seq"]
    push_service.wait_for_push(kept, lambda p: p["seq"] == first)
    push_service.wait_for(gone.requests, what="the push to the gone subscription")  # both are pushed at once
    gate(lambda: metric(server, "parley_push_targets_removed_total") > removed, what="the subscription's removal")
    push_service.respond(gone, None)  # were it still subscribed, it would now take pushes

    # Two more rounds: the second message's pushes are all answered before the third's round starts.
    for text in ("two", "three"):
        seq = server.send(ada, text, conversation=conversation)["seq"]
        push_service.wait_for_push(kept, lambda p, seq=seq: p["seq"] == seq)
    assert [r.status for r in gone.requests()] == [status], f"nothing more goes to a subscription that answered {status}"
    api(server, bob, "DELETE", "/v1/push/subscriptions", {"endpoint": gone.endpoint}, expect=404)
    api(server, bob, "DELETE", "/v1/push/subscriptions", {"endpoint": kept.endpoint}, expect=204)


@pytest.mark.parametrize("status", [429, 503])
def test_a_busy_push_service_is_tried_again(server, push_service, status):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    conversation = direct(server, ada, bob)
    subscription = subscribe(server, bob, push_service)
    push_service.respond_next(1, status, retry_after=1)

    seq = server.send(ada, "are you there", conversation=conversation)["seq"]
    push_service.wait_for_push(subscription, lambda p: p["seq"] == seq, timeout=30, what="the push after a retry")
    assert [r.status for r in subscription.requests()] == [status, 201]
    assert subscription.requests()[0].payload["seq"] == seq, "the retry is the same push"


def test_a_push_owed_when_the_server_was_killed_arrives_after_the_restart_once(server, push_service):
    ada, bob = register(server, "ada", "Ada Lovelace"), register(server, "bob", "Bob Builder")
    grace = register(server, "grace", "Grace Hopper")
    conversation = direct(server, ada, bob)
    other = direct(server, grace, bob)
    subscription = subscribe(server, bob, push_service)

    push_service.down()
    retries = metric(server, "parley_push_retries_total")
    seq = server.send(ada, "written while the push service was down", conversation=conversation)["seq"]  # acknowledged
    # Kill once the dispatcher has tried and is waiting to try again (the push is owed, in the database).
    gate(lambda: metric(server, "parley_push_retries_total") > retries, timeout=40, what="a failed push attempt")
    server.process.kill()
    server.process.wait(timeout=10)
    server.process = None
    push_service.up()
    server.start()

    # A node that died holding the user's lease is waited out (60 s) before another takes over.
    push_service.wait_for_push(subscription, lambda p: p["conversationId"] == conversation and p["seq"] == seq,
                               timeout=120, what="the owed push after the restart")
    later = server.send(grace, "and one more", conversation=other)["seq"]
    push_service.wait_for_push(subscription, lambda p: p["conversationId"] == other and p["seq"] == later, timeout=30)
    delivered = [r for r in subscription.requests() if r.accepted and r.payload["conversationId"] == conversation]
    assert [r.payload["seq"] for r in delivered] == [seq], f"exactly one push for the message: {delivered}"
