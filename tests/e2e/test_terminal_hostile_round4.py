"""`parley chat` as a fourth hostile tester used it; each test fails on the code it was found on:

- `/send-file report.txt` (a relative path) written offline, then the client started again in another
  folder, sent that folder's report.txt: someone's private file of the same name.
- `/send-file` held the line until the upload ended: offline, for ever (even /quit waited).
- Two `parley chat` on one home wrote over each other's outbox: a message one of them promised to
  send never went.
- `/open` while the server was unreachable printed the chat 30 s later.
- A message of files only was said as "" (the status line) and as nothing (the notice of another chat).
- Out of the group, `/reply` said why twice.
- A name with a colon ("Bob Builder: Alice") wrote as though Bob were writing "Alice: …".
- Ended by SIGTERM, the client left the terminal raw, without echo, with bracketed paste on.
"""
import os
import re
import tempfile
import time
import uuid

import pexpect

from conftest import BINARY
from test_terminal_files import upload
from test_terminal_message_actions import _chat_with_bob, _eventually, _terminal
from test_web_files import link, served


def _history(server, session, conversation):
    return server.rest(session, "GET", f"/v1/conversations/{conversation}/messages").json()["messages"]


def _answer_bob(terminal):
    """Alice writes back: both have written, contacts, so Bob's groups take her in at once."""
    terminal.sendline("hey Bob")
    terminal.expect(re.escape('✓ "hey Bob"'))


def _offline_terminal(home, cwd):
    terminal = pexpect.spawn(BINARY, ["chat", "--home", home, "--catch-up-wait", "1s"], cwd=cwd, encoding="utf-8",
                             timeout=20, dimensions=(40, 160))
    terminal.expect(re.escape("[not connected yet — the list as last synced]"))
    return terminal


def test_a_relative_path_is_the_file_chosen_even_when_the_client_starts_again_elsewhere(server):
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as personal:
        with open(os.path.join(work, "report.txt"), "wb") as file:
            file.write(b"WORK report: figures for the quarter\n")
        with open(os.path.join(personal, "report.txt"), "wb") as file:
            file.write(b"PRIVATE diary, never to be shared!!!\n")  # the same size: no size check tells them apart
        assert os.path.getsize(os.path.join(work, "report.txt")) == os.path.getsize(os.path.join(personal, "report.txt"))
        bob, _, conversation, terminal = _chat_with_bob(server, home)
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)

        server.stop()
        terminal = _offline_terminal(home, work)
        terminal.sendline("/open 1")
        terminal.expect("hi Alice")
        started = time.monotonic()
        terminal.sendline("/send-file report.txt the work report")
        terminal.expect(re.escape('(sending) "the work report"'))
        # The line is free at once, offline as online: /quit ends the client, the message kept.
        terminal.sendline("/quit")
        terminal.expect(re.escape("1 message(s) not sent yet go out the next time you start parley chat."))
        terminal.expect(pexpect.EOF)
        assert time.monotonic() - started < 10, "the upload held the line"

        server.start()
        terminal = pexpect.spawn(BINARY, ["chat", "--home", home], cwd=personal, encoding="utf-8", timeout=30, dimensions=(40, 160))
        terminal.expect(r"\[online\]")
        _eventually(lambda: any(m.get("attachments") for m in _history(server, bob, conversation)), "the file message arrives")
        [message] = [m for m in _history(server, bob, conversation) if m.get("attachments")]
        content = served(server, link(server, bob, message["attachments"][0]["id"])).content
        assert content == b"WORK report: figures for the quarter\n"
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_second_chat_on_the_same_home_is_refused_and_the_first_loses_nothing(server):
    with tempfile.TemporaryDirectory() as home:
        bob, _, conversation, terminal = _chat_with_bob(server, home)
        second = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(40, 160))
        second.expect(re.escape("Another parley chat is using"))
        second.expect(pexpect.EOF)
        second.close()
        assert second.exitstatus == 1
        terminal.sendline("still here")
        terminal.expect(re.escape('✓ "still here"'))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        # The first one gone, the home is free again.
        terminal = _terminal(home)
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        assert [m["text"] for m in _history(server, bob, conversation)] == ["hi Alice", "still here"]


def test_open_while_the_server_is_unreachable_prints_the_chat_held_at_once(server):
    with tempfile.TemporaryDirectory() as home:
        bob, _, conversation, terminal = _chat_with_bob(server, home)
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        server.stop()
        terminal = _offline_terminal(home, home)
        started = time.monotonic()
        terminal.sendline("/open 1")
        terminal.expect("hi Alice")
        assert time.monotonic() - started < 10, "the chat waited for a request to time out"
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        server.start()


def test_a_message_of_files_only_is_said_by_its_files(server):
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as folder:
        bob, alice_id, conversation, terminal = _chat_with_bob(server, home)
        path = os.path.join(folder, "contract.pdf")
        with open(path, "wb") as file:
            file.write(b"%PDF-1.4\n" + os.urandom(2000))
        terminal.sendline(f"/send-file {path}")
        terminal.expect(re.escape("✓ contract.pdf"), timeout=30)
        assert '""' not in terminal.before

        # A file-only message in a chat that is not open: the notice names it.
        other = server.register("carol", "Carol Danvers")
        uploaded = upload(server, other, "minutes.txt", b"the minutes")
        sent = server.rest(other, "POST", "/v1/messages", {"clientId": str(uuid.uuid4()), "recipientId": alice_id, "text": "",
                                                            "attachments": [{"uploadId": uploaded}]})
        assert sent.status_code == 201, sent.text
        terminal.expect(re.escape("• New message from Carol Danvers: 📎 minutes.txt"))
        terminal.sendline("/list")
        terminal.expect(re.escape("📎 minutes.txt"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_out_of_the_group_a_reply_says_why_once(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice_id, _, terminal = _chat_with_bob(server, home)
        _answer_bob(terminal)
        made = server.rest(bob, "POST", "/v1/groups", {"clientId": str(uuid.uuid4()), "title": "Trio", "memberIds": [alice_id]})
        group = made.json()["conversation"]["id"]
        server.send(bob, "in the group", conversation=group)
        terminal.sendline("/list")
        terminal.expect(r"(\d+)\. Trio")
        terminal.sendline(f"/open {terminal.match.group(1)}")
        terminal.expect(r"\[(\d+)\] [^\r\n]*Bob Builder: in the group")
        number = terminal.match.group(1)
        removed = server.rest(bob, "POST", f"/v1/conversations/{group}/members/{alice_id}/remove", {"clientId": str(uuid.uuid4())})
        assert removed.status_code == 201, removed.text
        terminal.expect("removed you")
        terminal.sendline(f"/reply {number} me too")
        terminal.expect("you're no longer a member")
        terminal.sendline("/help")
        terminal.expect(re.escape("/list · /open N"))
        assert "no longer a member" not in terminal.before, terminal.before
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_name_with_a_colon_cannot_pass_for_someone_writing(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice_id, _, terminal = _chat_with_bob(server, home)
        _answer_bob(terminal)
        mal = server.register("mal", "Mal Reynolds")
        server.send(mal, "hello", recipient=bob["user"]["id"])
        server.send(bob, "hi", recipient=mal["user"]["id"])
        renamed = server.rest(mal, "PATCH", "/v1/me", {"displayName": "Bob Builder: Alice"})
        assert renamed.status_code == 200, renamed.text
        made = server.rest(bob, "POST", "/v1/groups", {"clientId": str(uuid.uuid4()), "title": "Team",
                                                         "memberIds": [alice_id, mal["user"]["id"]]})
        group = made.json()["conversation"]["id"]
        server.send(mal, "can you approve the transfer today?", conversation=group)
        terminal.expect(re.escape("• Bob Builder: Alice (@mal) in Team: can you approve the transfer today?"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_chat_ended_by_sigterm_leaves_the_terminal_as_it_was(server):
    with tempfile.TemporaryDirectory() as home:
        bob, _, _, terminal = _chat_with_bob(server, home)
        terminal.kill(15)
        terminal.expect(pexpect.EOF)
        assert "\x1b[?2004l" in terminal.before, "bracketed paste turned off again"
        terminal.close()
        assert terminal.signalstatus is None and terminal.exitstatus == 143


def test_a_file_still_uploading_when_another_chat_opens_names_itself_and_says_where_it_went(server):
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as folder:
        bob, alice_id, conversation, terminal = _chat_with_bob(server, home)
        carol = server.register("carol", "Carol Danvers")
        server.send(carol, "hi from Carol", recipient=alice_id)
        terminal.expect("hi from Carol")  # her chat is known here
        path = os.path.join(folder, "big.bin")
        with open(path, "wb") as file:
            file.write(os.urandom(3_000_000))
        # The server away, the file waits: another chat is open before a byte of it goes.
        server.stop()
        terminal.expect(r"\[offline")
        terminal.sendline(f"/send-file {path}")
        terminal.expect(re.escape("Uploading big.bin… 0%"))
        terminal.sendline("/list")
        terminal.expect(r"(\d+)\. Carol Danvers")
        terminal.sendline(f"/open {terminal.match.group(1)}")
        terminal.expect("── Chat with Carol Danvers")
        server.start()
        terminal.expect(re.escape("• big.bin sent to Bob Builder"), timeout=60)
        _eventually(lambda: any(m.get("attachments") for m in _history(server, bob, conversation)), "the file arrives")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
