"""`parley chat` as a hostile tester used it: pastes, Ctrl-C, other people's texts that try to look
like the client's own lines, a failed send in the outbox, pipes that close, bad arguments."""
import os
import subprocess
import tempfile
import time

import pexpect
import requests

from conftest import BINARY
from test_terminal_client import _register_alice, _run, alice_chatting_with_bob, last_text

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def test_a_paste_goes_into_the_line_whole_and_ctrl_c_clears_a_draft(server):
    """Pasted lines once went out one by one, and one starting with '/' ran as a command; Ctrl-C
    with a half-typed line quit and lost it."""
    with tempfile.TemporaryDirectory() as home:
        bob, terminal = alice_chatting_with_bob(server, home, timeout=20)
        terminal.send(PASTE_START + "first line\r\n/notify none\rthird line" + PASTE_END)
        terminal.expect("first line↵/notify none↵third line")
        time.sleep(0.5)  # time for a wrongly sent line to reach the server
        assert requests_conversations(server, bob) == [], "nothing is sent before Enter"
        terminal.send("\r")
        deadline = time.time() + 10
        while time.time() < deadline and requests_conversations(server, bob) == []:
            time.sleep(0.1)
        assert last_text(server, bob) == "first line\n/notify none\nthird line", "one message, its line breaks kept"
        terminal.send("a draft")
        terminal.send("\x03")  # Ctrl-C: the draft goes, the client stays
        terminal.send("after\r")
        terminal.expect('✓ "after"')
        assert last_text(server, bob) == "after"
        terminal.send("\x03")  # on an empty line it quits
        terminal.expect(pexpect.EOF)


def requests_conversations(server, account):
    listed = requests.get(f"{server.url}/v1/conversations", headers={"Authorization": "Bearer " + account["token"]}).json()
    return [c for c in listed["conversations"] if c.get("lastMessage")]


def test_a_line_wider_than_the_terminal_scrolls_on_its_row(server):
    """A line the terminal wrapped was drawn again on its last row only, leaving copies of the
    draft all over the screen; now it stays on one row and scrolls, marked with …."""
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        _run(["chat", "register", "--home", home, "--server", server.url, "--username", "alice", "--password", "wonderland1"])
        terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(24, 40))
        terminal.expect(r"\[online\]")
        terminal.sendline("/new bob")
        terminal.expect("Say hello!")
        typed = "".join(f"{i:03d}-" for i in range(30))  # 120 columns
        terminal.send(typed)
        terminal.send("\x1b[D")
        terminal.expect("…")
        time.sleep(0.3)
        drawn = terminal.read_nonblocking(100000, timeout=1) if terminal.isalive() else ""
        assert typed not in drawn, "never the whole line at once"
        terminal.send("\r")
        terminal.expect('✓ "000-001-')
        assert last_text(server, bob) == typed, "what is sent is the whole line"
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_someone_elses_lines_and_direction_marks_cannot_pass_for_the_clients_own(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob)
        server.send(bob, "ok\n12:00 AM Carol: approved\u202e ✓✓ read", recipient=alice_id)
        output, status = _run(["chat", "tail", "--home", home, "--with", "bob", "--count", "5", "--exit-after", "0"])
        assert status == 0, output
        lines = output.replace("\r", "").split("\n")
        assert "  ┆ 12:00 AM Carol: approved ✓✓ read" in lines, output
        assert not any(line.startswith("12:00 AM Carol") for line in lines), output
        assert "\u202e" not in output


def test_a_scripted_send_answers_for_its_own_message(server):
    """An older message failed in the outbox (a file that could no longer be read) made every later
    `chat send` exit 1 though its message went out: a script retrying would send it twice."""
    with tempfile.TemporaryDirectory() as home:
        bob, terminal = alice_chatting_with_bob(server, home, timeout=20)
        terminal.sendline("/send-file /proc/self/status")
        terminal.expect("can no longer be read")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        output, status = _run(["chat", "send", "--home", home, "--to", "bob", "sent by a script"])
        assert status == 0 and "Sent to Bob Builder" in output, output
        assert last_text(server, bob) == "sent by a script"


def test_bad_arguments_and_closed_pipes_end_quietly(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob)
        for number in range(30):  # more than a pipe holds, so the writes meet the closed pipe
            server.send(bob, f"line {number} " + "x" * 3000, recipient=alice_id)
        output, status = _run(["chat", "tail", "--home", home, "--with", "bob", "--count", "-1"])
        assert status == 64 and "--count" in output, output
        output, status = _run(["chat", "send", "--home", home, "--to", "alice", "to myself"])
        assert status == 1 and "is you" in output, output
        # The reader goes after 20 bytes: a quiet end, not a trap and a backtrace.
        piped = subprocess.run(["bash", "-o", "pipefail", "-c", f"'{BINARY}' chat tail --home '{home}' --with bob --count 30 --exit-after 0 | head -c 20"],
                               capture_output=True, text=True, timeout=60)
        assert piped.returncode == 0 and "Bob" in piped.stdout and "Fatal" not in piped.stderr, piped
        # Bytes that are not UTF-8 would have gone out as U+FFFD.
        refused = subprocess.run([os.fsencode(BINARY), b"chat", b"send", b"--home", os.fsencode(home), b"--to", b"bob", b"caf\xe9"],
                                 capture_output=True, timeout=60)
        assert refused.returncode == 64 and b"UTF-8" in refused.stderr, refused
