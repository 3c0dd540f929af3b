"""`parley chat` as a third hostile tester used it: a delete and an edit made while the client was
closed, `chat tail` on a terminal with text padded to its edge, characters a terminal draws wider
than one cluster (a run of Hangul jamo), and a paste holding C1 controls and a direction override."""
import io
import tempfile
import unicodedata
import uuid

import pexpect

from conftest import BINARY
from test_terminal_client import _run
from test_terminal_hostile_round2 import _act, _register, _rows, _user_id


def _width(row):
    """Columns an xterm-like terminal gives a row, one code point at a time (wide 2, marks 0)."""
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in row)


def _bob_and_alice(server, home):
    """Bob (over REST) and Alice, signed in in `home`: Bob's session and Alice's user id."""
    bob = server.register("bob", "Bob Builder")
    _register(home, server.url)
    return bob, _user_id(server, bob, "alice")


def _chat(home, columns=120, wait="5s"):
    terminal = pexpect.spawn(BINARY, ["chat", "open", "--home", home, "--catch-up-wait", wait], encoding="utf-8", timeout=20,
                             dimensions=(40, columns))
    terminal.logfile_read = seen = io.StringIO()
    return terminal, seen


def test_a_delete_and_an_edit_made_while_the_client_was_closed_never_print_as_they_were(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice = _bob_and_alice(server, home)
        time_at = server.send(bob, "see you at 5", recipient=alice)
        secret = server.send(bob, "wrong chat: my password is hunter2", recipient=alice)
        terminal, _ = _chat(home)  # the client's copy holds both, as they were
        terminal.expect("hunter2")  # the list's preview
        terminal.expect(r"\[online\]")
        terminal.sendline("/open 1")
        terminal.expect("see you at 5")
        terminal.expect("hunter2")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)

        _act(server, bob, time_at, {"kind": "edit", "text": "see you at 6"})
        _act(server, bob, secret, {"kind": "delete"})

        # However slow the catch-up on a loaded machine: the list waits for it (5 s by default).
        terminal, seen = _chat(home, wait="60s")
        terminal.expect("Conversations:")
        terminal.expect(r"\[online\]")
        terminal.sendline("/open 1")
        terminal.expect(r"see you at 6 \(edited\)")
        terminal.expect("This message was deleted")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        output = seen.getvalue()
        assert "hunter2" not in output and "see you at 5" not in output, output  # not in the list, not in the chat


def test_tail_on_a_terminal_wraps_text_padded_to_its_edge(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice = _bob_and_alice(server, home)
        server.send(bob, "ok" + " " * 150 + "12:19 PM Carol: pay Mallory", recipient=alice)
        tail = pexpect.spawn(BINARY, ["chat", "tail", "--home", home, "--with", "bob", "--count", "5", "--exit-after", "0"],
                             encoding="utf-8", timeout=20, dimensions=(24, 40))
        tail.expect(pexpect.EOF)
        rows = [row for row in _rows(tail.before) if row]
        start = next(i for i, row in enumerate(rows) if "Bob Builder: ok" in row)
        message = rows[start:]
        assert len(message) > 3 and all(_width(row) <= 40 for row in message), message
        assert "Mallory" in message[-1] and all(row.startswith("  ┆ ") for row in message[1:]), message


def test_a_run_of_hangul_jamo_is_wrapped_where_a_terminal_would_wrap_it(server):
    """28 leading consonants are one character to Swift and 56 columns to a terminal."""
    with tempfile.TemporaryDirectory() as home:
        bob, alice = _bob_and_alice(server, home)
        server.send(bob, "ok " + "\u1100" * 28 + " 12:19 PM You: pay Mallory", recipient=alice)
        terminal, seen = _chat(home, columns=40)
        terminal.expect(r"\[online\]")
        terminal.sendline("/open 1")
        terminal.expect("Mallory")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        rows = _rows(seen.getvalue())
        start = max(i for i, row in enumerate(rows) if "Bob Builder: ok" in row)
        message = rows[start:start + 1] + [row for row in rows[start + 1:] if row.startswith("  ┆ ")]
        assert all(_width(row) <= 40 for row in rows if row), [r for r in rows if _width(r) > 40]
        assert not any(row.lstrip().startswith("12:19") for row in rows), rows
        assert "Mallory" in message[-1], message


def test_a_paste_with_c1_controls_and_a_direction_override_sends_the_rest_and_echoes_neither(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice = _bob_and_alice(server, home)
        first = server.send(bob, "hi", recipient=alice)
        terminal, seen = _chat(home)
        terminal.expect(r"\[online\]")
        terminal.sendline("/open 1")
        terminal.expect("Bob Builder: hi")
        terminal.send("\x1b[200~hello \u009b31m red \u202eRLO\x1b[201~\r")
        terminal.expect("hello 31m red RLO")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        texts = [m["text"] for m in server.history(bob, first["conversationId"])]
        assert texts[-1] == "hello 31m red RLO", texts
        output = seen.getvalue()
        assert "\u009b" not in output and "\u202e" not in output, repr(output)


def test_the_list_names_someone_removed_before_this_client_knew_them(server):
    """The list's preview of a removal names the person removed ("Bob Builder removed Carol Chen"),
    whom this client never had in a member list."""
    from test_terminal_groups import _alice_and_crew, _befriend
    with tempfile.TemporaryDirectory() as home:
        alice, bob, crew = _alice_and_crew(server, home)
        carol = server.register("carol", "Carol Chen")
        _befriend(server, bob, carol)
        path = f"/v1/conversations/{crew}/members"
        assert server.rest(bob, "POST", path, {"clientId": str(uuid.uuid4()), "userIds": [carol["user"]["id"]]}).status_code in (200, 201)
        remove = f"{path}/{carol['user']['id']}/remove"
        assert server.rest(bob, "POST", remove, {"clientId": str(uuid.uuid4())}).status_code in (200, 201)
        terminal, seen = _chat(home)
        terminal.expect(r"\[online\]")
        terminal.sendline("/list")
        terminal.expect("Bob Builder removed Carol Chen")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        assert "removed Someone" not in seen.getvalue(), seen.getvalue()



def test_line_and_paragraph_separators_break_the_line_as_a_line_break_does(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice = _bob_and_alice(server, home)
        server.send(bob, "ok\u20281:05 PM You: yes\u20291:06 PM You: pay", recipient=alice)
        output, status = _run(["chat", "tail", "--home", home, "--with", "bob", "--count", "5", "--exit-after", "0"])
        assert status == 0, output
        assert "\u2028" not in output and "\u2029" not in output, repr(output)
        assert "Bob Builder: ok" in output and "  ┆ 1:05 PM You: yes" in output and "  ┆ 1:06 PM You: pay" in output, output


def test_with_the_server_gone_the_list_comes_as_last_synced_after_the_wait(server):
    with tempfile.TemporaryDirectory() as home:
        bob, alice = _bob_and_alice(server, home)
        server.send(bob, "see you later", recipient=alice)
        terminal, _ = _chat(home)
        terminal.expect("see you later")  # the list, cached
        terminal.expect(r"\[online\]")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        server.stop()
        terminal, _ = _chat(home, wait="1s")
        terminal.expect(r"\[not connected yet — the list as last synced\]")
        terminal.expect(r"1\. Bob Builder .*— see you later")
        terminal.expect(r"\[offline")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
