"""`parley chat`'s /name, and names changed elsewhere, through a pseudo-terminal, against a real server."""
import re
import tempfile

import pexpect
import requests

from test_terminal_client import _auth
from test_terminal_message_actions import _chat_with_bob, _line, _terminal


def test_name_changes_mine_everywhere_and_a_partners_new_name_shows_on_their_next_line(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice_id, conversation, terminal = _chat_with_bob(server, home)

        terminal.sendline("/name")
        terminal.expect(re.escape("Usage: /name NEW NAME (others see you as “Alice Liddell”)"))
        terminal.sendline("/name You")
        terminal.expect(re.escape("Could not change your name: ") + r"[^\r\n]*You")
        terminal.sendline("/name   Alice   Pleasance ")
        terminal.expect(re.escape("Others now see you as “Alice Pleasance”."))
        seen = requests.get(f"{server.url}/v1/users/{alice_id}", headers=_auth(bob), timeout=10).json()
        assert seen["displayName"] == "Alice Pleasance"

        # Bob renames himself elsewhere: his next line carries the new name, live.
        renamed = requests.patch(f"{server.url}/v1/me", json={"displayName": "Bob the Builder"}, headers=_auth(bob), timeout=10)
        assert renamed.status_code == 200 and renamed.json()["displayName"] == "Bob the Builder", renamed.text
        server.send(bob, "can we fix it?", conversation=conversation)
        terminal.expect(_line(2, "Bob the Builder", "can we fix it?"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)

        # Bob renames again while the terminal is closed: no event tells of it, the list read again does.
        renamed = requests.patch(f"{server.url}/v1/me", json={"displayName": "Robert Builder"}, headers=_auth(bob), timeout=10)
        assert renamed.status_code == 200, renamed.text

        # The session kept the new name: a restart knows it before the network answers.
        terminal = _terminal(home)
        terminal.sendline("/name")
        terminal.expect(re.escape("(others see you as “Alice Pleasance”)"))
        terminal.sendline("/list")
        terminal.expect(re.escape("1. Robert Builder"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
