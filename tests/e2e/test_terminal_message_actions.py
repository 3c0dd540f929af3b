"""`parley chat`'s message commands (/reply, /react, /edit, /delete) through a pseudo-terminal, against a real server."""
import re
import tempfile
import time
import uuid

import pexpect
import requests

from conftest import BINARY
from test_terminal_client import _auth, _register_alice


def _act(server, session, conversation, seq, kind, **fields):
    response = requests.post(f"{server.url}/v1/conversations/{conversation}/messages/{seq}/actions",
                             json={"clientId": str(uuid.uuid4()), "kind": kind, **fields}, headers=_auth(session), timeout=10)
    response.raise_for_status()
    return response.json()["message"]


def _line(number, sender, text):
    """A numbered message line: "[2] 12:01 PM You: text", whatever the time."""
    return re.escape(f"[{number}] ") + r"[^\r\n]*" + re.escape(f"{sender}: {text}")


def _eventually(check, what, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _terminal(home, env=None):
    """`parley chat` in a pseudo-terminal, once it is online; `env`: environment settings to add."""
    settings = [f"{key}={value}" for key, value in (env or {}).items()]
    terminal = pexpect.spawn("env", [*settings, BINARY, "chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(40, 160))
    terminal.expect(r"\[online\]")
    return terminal


def _chat_with_bob(server, home):
    """Bob writes "hi Alice" to Alice (the terminal, in `home`), whose chat with him is open:
    (bob, alice's id, the conversation, the terminal)."""
    bob = server.register("bob", "Bob Builder")
    alice_id = _register_alice(server, home, bob, "Alice Liddell")
    conversation = server.send(bob, "hi Alice", recipient=alice_id)["conversationId"]
    terminal = _terminal(home)
    terminal.sendline("/new bob")
    terminal.expect(_line(1, "Bob Builder", "hi Alice"))
    return bob, alice_id, conversation, terminal


def test_reply_react_edit_and_delete_from_the_terminal_and_see_the_other_sides(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice_id, conversation, terminal = _chat_with_bob(server, home)
        terminal.sendline("hello Bob")
        terminal.expect(re.escape('[2] ✓ "hello Bob"'))

        terminal.sendline("/reply 1 answering your question")
        terminal.expect(re.escape('[3] ✓ "answering your question"'))
        answer = _eventually(lambda: next((m for m in server.history(bob, conversation) if m["seq"] == 3), None), "the reply")
        assert answer["replyTo"]["seq"] == 1 and answer["replyTo"]["preview"] == "hi Alice"

        terminal.sendline("/react 1 👍")
        terminal.expect(_line(1, "Bob Builder", "hi Alice") + re.escape(" [👍 1]"))
        _eventually(lambda: server.history(bob, conversation)[0].get("reactions"), "the reaction on the server")
        terminal.sendline("/react 1")
        _eventually(lambda: not server.history(bob, conversation)[0].get("reactions"), "the reaction taken back")

        terminal.sendline("/edit 1 not mine")
        terminal.expect("You can only edit your own messages.")
        terminal.sendline("/edit 2 hello Bob, edited")
        terminal.expect(_line(2, "You", "hello Bob, edited (edited)"))
        terminal.sendline("/delete 1")
        terminal.expect("You can only delete your own messages for everyone")
        terminal.sendline("/delete 2")
        terminal.expect(_line(2, "You", "This message was deleted"))
        deleted = _eventually(lambda: server.history(bob, conversation)[1].get("deletedAt") and server.history(bob, conversation)[1],
                              "the delete on the server")
        assert deleted["text"] == ""
        terminal.sendline("/delete 1 me")
        terminal.expect(re.escape("[1] deleted for you"))
        assert [m["seq"] for m in server.history(bob, conversation)] == [1, 2, 3], "delete for me is for me only"

        # Bob's actions show live: a reaction to my reply, an edit and a delete of his.
        _act(server, bob, conversation, 3, "react", emoji="❤️")
        terminal.expect(_line(3, "You", "answering your question") + re.escape(" [❤️ 1]"))
        server.send(bob, "one more", conversation=conversation)
        terminal.expect(_line(4, "Bob Builder", "one more"))
        _act(server, bob, conversation, 4, "edit", text="one more thing")
        terminal.expect(_line(4, "Bob Builder", "one more thing (edited)"))
        _act(server, bob, conversation, 4, "delete")
        terminal.expect(_line(4, "Bob Builder", "This message was deleted"))
        terminal.sendline("/react 9 👍")
        terminal.expect(re.escape("Usage: /react N EMOJI"))
        terminal.sendline("/help")
        terminal.expect(re.escape("/reply N TEXT"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_edits_and_deletes_made_while_the_other_side_was_offline(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob)
        conversation = server.send(bob, "first", recipient=alice_id)["conversationId"]
        server.send(bob, "second", conversation=conversation)

        # Alice saw both, then quit; Bob edits one and deletes the other meanwhile.
        terminal = _terminal(home)
        terminal.sendline("/list")
        terminal.expect("1. Bob Builder")
        terminal.sendline("/open 1")
        terminal.expect(_line(2, "Bob Builder", "second"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        _act(server, bob, conversation, 1, "edit", text="first, edited")
        _act(server, bob, conversation, 2, "delete")
        terminal = _terminal(home)
        terminal.sendline("/list")
        terminal.expect("1. Bob Builder")
        terminal.sendline("/open 1")
        terminal.expect(_line(1, "Bob Builder", "first, edited (edited)"))
        terminal.expect(_line(2, "Bob Builder", "This message was deleted"))

        # Now Alice is the one offline: her edit and delete wait in the outbox and go when the server is back.
        terminal.sendline("mine to fix")
        terminal.expect(re.escape('[3] ✓ "mine to fix"'))
        terminal.sendline("mine to take back")
        terminal.expect(re.escape('[4] ✓ "mine to take back"'))
        server.stop()
        terminal.expect(r"\[offline")
        terminal.sendline("/edit 3 mine, fixed")
        terminal.expect(_line(3, "You", "mine, fixed (edited)"))
        terminal.sendline("/delete 4")
        terminal.expect(_line(4, "You", "This message was deleted"))
        server.start()
        terminal.expect(r"\[online\]", timeout=60)
        history = _eventually(lambda: (lambda h: h if h[2].get("editedAt") and h[3].get("deletedAt") else None)(server.history(bob, conversation)),
                              "the queued actions on the server", timeout=60)
        assert history[2]["text"] == "mine, fixed" and history[3]["text"] == ""
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
