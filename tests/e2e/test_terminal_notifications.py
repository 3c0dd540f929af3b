"""`parley chat`'s /mute, /unmute and /notify, through a pseudo-terminal, against a real server: what
the terminal says is what the server then holds (GET /v1/notifications)."""
import re
import tempfile

import requests

from test_terminal_client import _register_alice
from test_terminal_message_actions import _terminal


def _settings(server, session):
    response = requests.get(f"{server.url}/v1/notifications", headers={"Authorization": f"Bearer {session['token']}"}, timeout=10)
    response.raise_for_status()
    return response.json()


def _alice_session(server):
    response = requests.post(f"{server.url}/v1/auth/login", json={"username": "alice", "password": "wonderland1"}, timeout=10)
    response.raise_for_status()
    return response.json()


def test_mute_unmute_and_notify_from_the_terminal(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob, "Alice Liddell")
        conversation = server.send(bob, "hi Alice", recipient=alice_id)["conversationId"]
        alice = _alice_session(server)

        terminal = _terminal(home)
        terminal.sendline("/help")
        terminal.expect(re.escape("/mute [N] [8h|1w|always] · /unmute [N] · /notify [N] all|mentions|none"))
        terminal.sendline("/mute")
        terminal.expect(re.escape("Open a chat first, or give its number from /list."))
        terminal.sendline("/list")
        terminal.expect(re.escape("1. Bob Builder"))

        # By list number, a week: the server holds it, and /list marks it.
        terminal.sendline("/mute 1 1w")
        terminal.expect(re.escape("Muted Bob Builder until "))
        [setting] = _settings(server, alice)["conversations"]
        assert setting["conversationId"] == conversation and setting["level"] == "all" and setting["mutedUntil"] is not None
        terminal.sendline("/list")
        terminal.expect(re.escape("1. Bob Builder [muted]"))

        # In the open chat: always, then the level, then unmuted.
        terminal.sendline("/open 1")
        terminal.expect(re.escape("── Chat with Bob Builder"))
        terminal.sendline("/mute always")
        terminal.expect(re.escape("Muted Bob Builder."))
        assert _settings(server, alice)["conversations"][0]["mutedUntil"] == 253402300799000
        terminal.sendline("/notify none")
        terminal.expect(re.escape("Bob Builder notifies you of nothing."))
        terminal.sendline("/unmute")
        terminal.expect(re.escape("Unmuted Bob Builder."))
        assert _settings(server, alice)["conversations"] == [{"conversationId": conversation, "level": "none", "mutedUntil": None}]
        terminal.sendline("/notify all")
        terminal.expect(re.escape("Bob Builder notifies you of every message."))
        assert _settings(server, alice)["conversations"] == []

        # Bad input: a usage line, nothing changed.
        terminal.sendline("/mute 1 forever")
        terminal.expect(re.escape("Usage: /mute [N] [8h|1w|always]"))
        terminal.sendline("/notify 9 all")
        terminal.expect(re.escape("No entry 9 in the list"))
        terminal.sendline("/notify loud")
        terminal.expect(re.escape("Usage: /notify [N] all|mentions|none"))
        assert _settings(server, alice)["conversations"] == []
        terminal.sendline("/quit")
        terminal.expect(re.escape("Bye."))
