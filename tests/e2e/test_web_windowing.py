"""A long chat is windowed: a bounded DOM however long the history, a stable scroll anchor, the newest
message one click away, and read marking that still works."""
import requests

from conftest import sign_in
from test_web_client import bubbles, by_id, wait

DOM_ELEMENTS = "return document.getElementsByTagName('*').length"
MIDDLE_ROW = """const m = document.getElementById('messages'), box = m.getBoundingClientRect();
    const middle = (box.top + box.bottom) / 2;
    const row = [...document.querySelectorAll('#message-list li.message')].find(r => r.getBoundingClientRect().bottom > middle);
    return row ? [row.querySelector('.text').textContent, row.getBoundingClientRect().top, m.scrollTop] : null"""
ROW_TOP = """const row = [...document.querySelectorAll('#message-list li.message')].find(r => r.querySelector('.text').textContent === arguments[0]);
    return row ? row.getBoundingClientRect().top : null"""


def seed(server, alice, bob, count):
    session = requests.Session()
    conversation = server.send(alice, "message 1", recipient=bob["user"]["id"])["conversationId"]
    import uuid
    for i in range(2, count + 1):
        session.post(server.url + "/v1/messages", headers={"Authorization": "Bearer " + alice["token"]}, timeout=10, json={
            "clientId": str(uuid.uuid4()), "conversationId": conversation, "text": f"message {i}"}).raise_for_status()
    return conversation


def test_a_long_history_keeps_a_bounded_dom_and_a_stable_anchor(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    conversation = seed(server, alice, bob, 700)
    b = browsers(height=700)
    sign_in(b, server, bob)
    b.get(server.url + "/#/c/" + conversation)
    wait(b, lambda d: bubbles(d) and bubbles(d)[-1] == "message 700")
    opened_dom = b.execute_script(DOM_ELEMENTS)
    assert opened_dom < 1500, opened_dom

    # Flick upwards to the very first message: the DOM stays bounded all the way, and each step
    # keeps the reader's row in place (no jump when rows come and go at the window's edges).
    largest, jumps, steps = 0, [], 0
    while bubbles(b)[0] != "message 1" and steps < 400:
        steps += 1
        before = b.execute_script(MIDDLE_ROW)
        b.execute_script("document.getElementById('messages').scrollTop -= 300")
        b.execute_script("return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        after = b.execute_script(ROW_TOP, before[0])
        largest = max(largest, b.execute_script(DOM_ELEMENTS))
        # The row in the middle moved down by exactly what was scrolled, whatever came or went
        # at the window's edges (unless the scroll was cut short at the very top).
        if before[2] >= 300 and after is not None:
            jumps.append(abs((after - before[1]) - 300))
    assert bubbles(b)[0] == "message 1", f"never reached the top in {steps} steps"
    assert largest < 1500, largest
    assert len(bubbles(b)) <= 150
    # The row in the middle moved by exactly the distance scrolled (±2 px), window slides included.
    assert jumps and max(jumps) <= 2, max(jumps)

    # A new message while reading old history: not forced into view; the pill brings the reader back.
    server.send(alice, "fresh news", conversation=conversation)
    wait(b, lambda d: by_id(d, "new-messages-pill").is_displayed())
    assert bubbles(b)[0] == "message 1"
    by_id(b, "new-messages-pill").click()
    wait(b, lambda d: bubbles(d)[-1] == "fresh news")
    in_view = b.execute_script("""const m = document.getElementById('messages');
        const rows = [...document.querySelectorAll('#message-list .bubble .text')];
        const last = rows[rows.length - 1].getBoundingClientRect(), box = m.getBoundingClientRect();
        return last.bottom <= box.bottom + 1 && last.top >= box.top - 1""")
    assert in_view
    assert b.execute_script(DOM_ELEMENTS) < 1500
    # Reading at the bottom marks the newest message read (the sender's view says so).
    wait(b, lambda d: server.conversations(alice)[0]["members"] and any(
        m["userId"] == bob["user"]["id"] and m["readSeq"] == 701 for m in server.conversations(alice)[0]["members"]))
