"""`parley chat` as a second hostile tester used it: a server (or a tampered connection) that sends
terminal escapes or a name reading "You", text padded to the terminal's edge, `chat tail` while the
other side edits and deletes, and a queued action the server refuses after a removal."""
import io
import re
import tempfile
import uuid
from functools import partial

import pexpect
import requests

from conftest import BINARY
from relay import FreezableRelay
from test_terminal_client import _run

# OSC 52 (a clipboard write of `rm -rf ~`), a clear screen and bells, JSON-escaped as a server would send them.
EVIL = b"\\u001b]52;c;cm0gLXJmIH4K\\u0007\\u001b[2J\\u0007\\u0007"
PLACEHOLDER = b"Z" * len(EVIL)
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]")


def _register(home, url, username="alice"):
    output, status = _run(["chat", "register", "--home", home, "--server", url, "--username", username, "--password", "wonderland1"])
    assert status == 0, output


def _user_id(server, finder, username):
    found = requests.get(f"{server.url}/v1/users?query={username}", headers={"Authorization": "Bearer " + finder["token"]}).json()
    return next(user["id"] for user in found["users"] if user["username"] == username)


def _online(home):
    """`parley chat` in a wide pseudo-terminal once it is online, and all it prints from the start."""
    terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(40, 160))
    terminal.logfile_read = seen = io.StringIO()
    terminal.expect(r"\[online\]")
    return terminal, seen


def _act(server, session, message, body):
    """A message action over REST, which must be applied."""
    path = f"/v1/conversations/{message['conversationId']}/messages/{message['seq']}/actions"
    assert server.rest(session, "POST", path, {"clientId": str(uuid.uuid4()), **body}).status_code == 200


def _rows(output):
    """What a terminal's rows hold, from the client's output: each printed row after its last
    clear-line, without the remaining control sequences."""
    rows = []
    for line in output.replace("\r", "").split("\n"):
        rows.append(CSI.sub("", line.split("\x1b[2K")[-1]))
    return rows


def test_a_hostile_server_cannot_send_escapes_or_a_name_that_reads_you(server):
    bob = server.register("bob", "Qxq")
    relay = FreezableRelay(server.port, rewrite=[(PLACEHOLDER, EVIL), (b'"Qxq"', b'"You"')])
    try:
        with tempfile.TemporaryDirectory() as home:
            _register(home, f"http://127.0.0.1:{relay.port}")
            server.send(bob, PLACEHOLDER.decode(), recipient=_user_id(server, bob, "alice"))
            output, status = _run(["chat", "tail", "--home", home, "--with", "bob", "--count", "5", "--exit-after", "0"])
            assert status == 0, output
            assert "]52;c;cm0gLXJmIH4K" in output, "the text arrived, rewritten: " + output
            assert "\x1b" not in output and "\x07" not in output, repr(output)
            assert "You (@bob): ]52" in output and " You: " not in output, output
    finally:
        relay.close()


def test_text_padded_to_the_edge_cannot_start_a_row_of_its_own(server):
    bob = server.register("bob", "Bob Builder")
    with tempfile.TemporaryDirectory() as home:
        _register(home, server.url)
        server.send(bob, "ok" + " " * 150 + "\t" * 3 + "12:19 PM You: pay Mallory", recipient=_user_id(server, bob, "alice"))
        terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(24, 40))
        terminal.expect(r"\[online\]")
        terminal.sendline("/open 1")
        terminal.expect("pay Mallory")
        rows = _rows(terminal.before + terminal.after)
        start = next(i for i, row in enumerate(rows) if "Bob Builder: ok" in row)
        message = rows[start:]
        assert len(message) > 3 and all(len(row) <= 40 for row in message), message
        assert "Mallory" in message[-1], message
        assert all(row.startswith("  ┆ ") for row in message[1:]), message
        assert not any(row.lstrip().startswith("12:19") for row in message), message
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_tail_shows_edits_and_deletes_as_they_happen(server):
    bob = server.register("bob", "Bob Builder")
    with tempfile.TemporaryDirectory() as home:
        _register(home, server.url)
        alice = _user_id(server, bob, "alice")
        time_at = server.send(bob, "see you at 5", recipient=alice)
        secret = server.send(bob, "wrong chat: my password is hunter2", recipient=alice)
        tail = pexpect.spawn(BINARY, ["chat", "tail", "--home", home, "--with", "bob"], encoding="utf-8", timeout=20)
        tail.expect("hunter2")
        act = partial(_act, server, bob)
        act(time_at, {"kind": "edit", "text": "see you at 6 (not 5!)"})
        tail.expect(r"changed: .*Bob Builder: see you at 6 \(not 5!\) \(edited\)")
        act(secret, {"kind": "delete"})
        tail.expect("changed: .*Bob Builder: This message was deleted")
        tail.terminate(force=True)


def test_a_queued_action_refused_after_a_removal_says_which_message(server):
    bob = server.register("bob", "Bob Builder")
    relay = FreezableRelay(server.port)
    try:
        with tempfile.TemporaryDirectory() as home:
            _register(home, f"http://127.0.0.1:{relay.port}")
            alice = _user_id(server, bob, "alice")
            server.send(bob, "hi", recipient=alice)
            output, status = _run(["chat", "send", "--home", home, "--to", "bob", "hi!"])
            assert status == 0, output
            made = server.rest(bob, "POST", "/v1/groups", {"clientId": str(uuid.uuid4()), "title": "Trio", "memberIds": [alice]})
            group = made.json()["conversation"]["id"]
            terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(24, 200))
            terminal.expect(r"1\. Trio")
            terminal.sendline("/open 1")
            terminal.expect("── Trio")
            terminal.sendline("alice two")
            terminal.expect(r'\[(\d+)\] ✓ "alice two"')
            number = terminal.match.group(1)
            relay.freeze()  # her edit waits on the wire while Bob removes her
            terminal.sendline(f"/edit {number} alice edited")
            removal = server.rest(bob, "POST", f"/v1/conversations/{group}/members/{alice}/remove", {"clientId": str(uuid.uuid4())})
            assert removal.status_code == 201
            relay.thaw()
            terminal.expect("Not done: your edit of “alice two” in Trio: You are no longer a member of this group.")
            terminal.sendline("/quit")
            terminal.expect(pexpect.EOF)
    finally:
        relay.close()


def test_a_chat_opened_while_the_outbox_goes_out_is_numbered_in_order(server):
    """Acknowledgements arriving while a chat loaded used to print their status lines first, taking
    the first numbers: the page then read [4] Bob, [1] You, [5] …, [2] …."""
    bob = server.register("bob", "Bob Builder")
    relay = FreezableRelay(server.port)
    port = relay.port
    try:
        with tempfile.TemporaryDirectory() as home:
            _register(home, f"http://127.0.0.1:{port}")
            server.send(bob, "hi", recipient=_user_id(server, bob, "alice"))
            terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(24, 200))
            terminal.expect(r"\[online\]")
            terminal.sendline("/open 1")
            terminal.expect("Bob Builder: hi")
            relay.close()
            terminal.expect(r"\[offline")
            for text in ["queued one", "queued two", "queued three"]:
                terminal.sendline(text)
                terminal.expect(f'\\(sending\\) "{text}"')
            terminal.sendline("/quit")
            terminal.expect(pexpect.EOF)
            relay = FreezableRelay(server.port, port=port)
            terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(24, 200))
            terminal.logfile_read = seen = io.StringIO()
            terminal.expect(r"\[online\]")
            relay.freeze()  # the page's load and the outbox's acknowledgements wait on the wire together
            terminal.sendline("/open 1")
            terminal.expect("── Chat with Bob Builder")
            relay.thaw()
            terminal.expect(r"queued three")
            terminal.expect(r"› ")
            opened = seen.getvalue().split("── Chat with Bob Builder", 1)[1]
            page = [row for row in _rows(opened) if re.match(r"\s*\[\d+\]", row)]
            numbers = [int(re.match(r"\s*\[(\d+)\]", row).group(1)) for row in page]
            assert numbers[:2] == [1, 2] and "Bob Builder: hi" in page[0] and "queued one" in page[1], page
            terminal.sendline("/quit")
            terminal.expect(pexpect.EOF)
    finally:
        relay.close()


def test_older_and_newer_after_a_search_result_print_every_message_once(server):
    """A search result opens on a window of rows around the hit: /older printed only what it fetched
    anew (skipping the rows loaded between the page's start and the window, or saying there were
    none), and the rows after the window could not be reached."""
    bob = server.register("bob", "Bob Builder")
    with tempfile.TemporaryDirectory() as home:
        _register(home, server.url)
        conversation = server.send(bob, "hi", recipient=_user_id(server, bob, "alice"))["conversationId"]
        for number in range(100):
            server.send(bob, f"hay {number}" + (" needle" if number == 60 else ""), conversation=conversation)
        terminal, seen = _online(home)
        terminal.sendline("/search needle")
        terminal.expect("/open N to see one")
        terminal.sendline("/open 1")
        terminal.expect(r"\((\d+) newer messages — /newer\)")
        assert terminal.match.group(1) == "34", "hay 66 to hay 99"
        for command, end in [("/older", "(no older messages)"), ("/newer", "(no newer messages)")]:
            for round in range(12):
                terminal.sendline(command)
                terminal.sendline(f"/done{round}")  # lines run in order: its answer comes after the command's rows
                terminal.expect(f"Unknown command /done{round}")
                if end in terminal.before:
                    break
            assert end in seen.getvalue(), command
        rows = _rows(seen.getvalue().split("Results for", 1)[1])
        texts = [re.search(r"Bob Builder: (.*)$", row).group(1) for row in rows if re.match(r"»? ?\[\d+\] .*Bob Builder: ", row)]
        expected = ["hi"] + [f"hay {n}" + (" needle" if n == 60 else "") for n in range(100)]
        assert sorted(texts) == sorted(expected), [t for t in expected if t not in texts] or texts
        terminal.sendline("from me")  # printed by its status line: never again by /newer
        terminal.expect('✓ "from me"')
        terminal.sendline("/newer")
        terminal.expect(re.escape("(no newer messages)"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_typing_turned_on_and_off_again_and_again_is_said_once_and_retry_answers(server):
    """A typist toggling typing over their WebSocket printed a line each time (24 in 10 s); now once
    in ten seconds, and again after their next message. /retry used to print nothing at all."""
    import json
    import time
    from websockets.sync.client import connect

    bob = server.register("bob", "Bob Builder")
    with tempfile.TemporaryDirectory() as home:
        _register(home, server.url)
        conversation = server.send(bob, "hi", recipient=_user_id(server, bob, "alice"))["conversationId"]
        terminal, seen = _online(home)
        terminal.sendline("/open 1")
        terminal.expect("Bob Builder: hi")
        terminal.sendline("/retry")
        terminal.expect("Nothing to retry.")
        with connect(f"ws://127.0.0.1:{server.port}/v1/ws") as socket:
            socket.send(json.dumps({"type": "hello", "token": bob["token"]}))
            for on in [True, False] * 6:  # within the server's 2 a second
                socket.send(json.dumps({"type": "typing", "conversationId": conversation, "isTyping": on}))
                time.sleep(0.6)
            server.send(bob, "there", conversation=conversation)
            terminal.expect("Bob Builder: there")
            socket.send(json.dumps({"type": "typing", "conversationId": conversation, "isTyping": True}))
            terminal.expect("Bob Builder is typing")
        assert seen.getvalue().count("Bob Builder is typing") == 2, seen.getvalue()
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
