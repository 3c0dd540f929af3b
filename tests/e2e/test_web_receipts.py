"""Receipts reach the sender's ticks whatever the network and the order the snapshot and stream arrive in.

Each test failed before its fix: a receipt that came on the stream while the conversation list was
still loading was dropped (and the list, read before it, never had it); a chat read while the
connection was down was marked read on the page only, and the sender never saw it.
"""
import requests

from conftest import sign_in
from test_web_client import bubbles, by_id, open_chat_of_two, statuses, wait

# Holds the conversation list's response until the test releases it, and records the frames the
# page's sockets receive: the test decides what the page learns first.
SNAPSHOT_GATE = """
const realFetch = window.fetch.bind(window);
window.__frames = [];
window.fetch = async (input, init) => {
  const response = await realFetch(input, init);
  if (String(input).includes("/v1/conversations?")) {
    window.__snapshotRead = true;
    while (!window.__releaseSnapshot) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return response;
};
const RealSocket = window.WebSocket;
window.WebSocket = class extends RealSocket {
  constructor(...args) {
    super(...args);
    this.addEventListener("message", (event) => window.__frames.push(JSON.parse(event.data).type));
  }
};
"""


def set_network(driver, online):
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                           {"offline": not online, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})


def cursors_of(server, session, conversation, member):
    summary = next(c for c in server.conversations(session) if c["id"] == conversation)
    return next((m["deliveredSeq"], m["readSeq"]) for m in summary["members"] if m["userId"] == member["user"]["id"])


def test_a_receipt_that_arrives_before_the_conversation_list_still_turns_the_ticks(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    conversation = server.send(alice, "did you get this?", recipient=bob["user"]["id"])["conversationId"]
    a = browsers()
    a.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SNAPSHOT_GATE})
    sign_in(a, server, alice)
    a.get(server.url + "/#/c/" + conversation)
    wait(a, lambda d: d.execute_script("return window.__snapshotRead === true && window.__frames.includes('synced')"))
    # The list was read before Bob read the message; his receipt reaches the page before the list does.
    response = requests.post(f"{server.url}/v1/conversations/{conversation}/receipts", json={"readSeq": 1},
                             headers={"Authorization": "Bearer " + bob["token"]}, timeout=10)
    assert response.status_code == 200, response.text
    wait(a, lambda d: "receipt" in d.execute_script("return window.__frames"))
    a.execute_script("window.__releaseSnapshot = true")
    wait(a, lambda d: bubbles(d) == ["did you get this?"] and statuses(d) == ["read"])


def test_a_chat_read_while_offline_is_reported_read_when_the_connection_returns(server, browsers):
    alice, bob, conversation, a, b = open_chat_of_two(server, browsers, "hi")
    wait(a, lambda d: statuses(d) == ["read"])
    b.execute_script("location.hash = arguments[0]", "#/")  # Bob leaves the chat; the next message is delivered, not read
    wait(b, lambda d: d.execute_script("return !document.getElementById('app-view').classList.contains('chat-open')"))
    server.send(alice, "are you there?", conversation=conversation)
    wait(a, lambda d: statuses(d) == ["read", "delivered"])

    set_network(b, online=False)
    wait(b, lambda d: by_id(d, "offline-banner").is_displayed(), timeout=10)
    b.execute_script("location.hash = arguments[0]", "#/c/" + conversation)  # reads it on the train
    wait(b, lambda d: bubbles(d) == ["hi", "are you there?"])
    assert cursors_of(server, alice, conversation, bob) == (2, 1), "nothing got through while offline"
    set_network(b, online=True)
    wait(b, lambda d: not by_id(d, "offline-banner").is_displayed(), timeout=30)
    wait(a, lambda d: statuses(d) == ["read", "read"], timeout=30)
    assert cursors_of(server, alice, conversation, bob) == (2, 2)
