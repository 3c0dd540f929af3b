"""`parley chat` in groups, through a pseudo-terminal, against a real server: read receipts after being
re-added, news of messages deleted while away, a new group's entries printed once, and what group
commands say when they cannot be done."""
import io
import re
import tempfile
import uuid

import pexpect
import requests

from conftest import BINARY
from test_terminal_client import _auth, _register_alice
from test_terminal_message_actions import _act, _eventually, _terminal


def _login_alice(server):
    response = requests.post(f"{server.url}/v1/auth/login", json={"username": "alice", "password": "wonderland1"}, timeout=10)
    response.raise_for_status()
    return response.json()


def _befriend(server, a, b):
    """Both write in their direct conversation: contacts, so either may put the other in a group."""
    conversation = server.send(a, "hi", recipient=b["user"]["id"])["conversationId"]
    server.send(b, "hello", conversation=conversation)


def _group(server, owner, title, members):
    response = requests.post(f"{server.url}/v1/groups", headers=_auth(owner), timeout=10,
                             json={"clientId": str(uuid.uuid4()), "title": title, "memberIds": [m["user"]["id"] for m in members]})
    response.raise_for_status()
    return response.json()["conversation"]["id"]


def _alice_and_crew(server, home):
    """Alice (the terminal's user, signed in in `home`), Bob, and Bob's group "Crew" with her in it."""
    bob = server.register("bob", "Bob Builder")
    _register_alice(server, home, bob, "Alice Liddell")
    alice = _login_alice(server)
    _befriend(server, bob, alice)
    return alice, bob, _group(server, bob, "Crew", [alice])


def _recorded(home):
    """The terminal and everything it printed from its start (news of the time away comes before
    "[online]"), as a growing buffer."""
    output = io.StringIO()
    terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(40, 160))
    terminal.logfile_read = output
    terminal.expect(r"\[online\]")
    return terminal, output


def test_the_first_message_after_i_am_added_back_is_marked_read(server):
    with tempfile.TemporaryDirectory() as home:
        alice, bob, group = _alice_and_crew(server, home)
        me = alice["user"]["id"]

        def mine():
            summary = next(c for c in server.conversations(alice) if c["id"] == group)
            return next(m["readSeq"] for m in summary["members"] if m["userId"] == me), summary["lastSeq"], summary["unreadCount"]

        terminal = _terminal(home)
        terminal.sendline("/list")
        terminal.expect(r"(\d+)\. Crew")
        terminal.sendline("/open " + terminal.match.group(1))
        terminal.expect("── Crew")
        requests.post(f"{server.url}/v1/conversations/{group}/members/{me}/remove", json={"clientId": str(uuid.uuid4())},
                      headers=_auth(bob), timeout=10).raise_for_status()
        terminal.expect("removed you")
        # Added back, and a message at once: it comes before the client has read the group again.
        requests.post(f"{server.url}/v1/conversations/{group}/members", json={"clientId": str(uuid.uuid4()), "userIds": [me]},
                      headers=_auth(bob), timeout=10).raise_for_status()
        last = server.send(bob, "welcome back", conversation=group)["seq"]
        terminal.expect("Bob Builder: welcome back")
        _eventually(lambda: mine() == (last, last, 0), f"readSeq {last} and nothing unread (now {mine()})", timeout=10)
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_message_deleted_while_i_was_away_is_not_announced(server):
    with tempfile.TemporaryDirectory() as home:
        alice, bob, group = _alice_and_crew(server, home)
        terminal = _terminal(home)  # once, so that what comes next is news
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        deleted = server.send(bob, "soon gone", conversation=group)
        _act(server, bob, group, deleted["seq"], "delete")
        server.send(bob, "still here", conversation=group)
        terminal, output = _recorded(home)  # the time away is caught up before "[online]"
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        notices = re.findall(r"• Bob Builder in Crew:[^\r\n]*", output.getvalue())
        assert notices == ["• Bob Builder in Crew: still here"], notices


def test_a_new_group_prints_its_entries_once(server):
    with tempfile.TemporaryDirectory() as home:
        alice, bob, _ = _alice_and_crew(server, home)
        terminal, output = _recorded(home)
        terminal.sendline('/group new "Trip" bob')
        terminal.expect("── Trip")
        terminal.sendline("first message")
        terminal.expect(re.escape('✓ "first message"'))
        # Bob writes after it: the stream is in order, so once his line is printed, the stream's copy
        # of the entries has come too (and would have been printed again).
        listed = requests.get(f"{server.url}/v1/conversations", headers=_auth(alice), timeout=10).json()["conversations"]
        trip = next(c["id"] for c in listed if c.get("title") == "Trip")
        server.send(bob, "and after it", conversation=trip)
        terminal.expect("and after it")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        printed = output.getvalue()
        assert printed.count("You created the group “Trip”") == 1, printed
        assert printed.count("You added Bob Builder") == 1, printed


def test_group_commands_that_cannot_be_done_say_why_in_words(server):
    with tempfile.TemporaryDirectory() as home:
        _alice_and_crew(server, home)
        terminal = _terminal(home)
        terminal.sendline('/group new "Trip" alice')
        terminal.expect(re.escape("You can't add yourself: you are in the group already."))
        terminal.sendline('/group new "Trip" bob')
        terminal.expect("── Trip")
        terminal.sendline("/add @bob")
        terminal.expect(re.escape("Bob Builder is already a member."))
        terminal.sendline("/add alice")
        terminal.expect(re.escape("You can't add yourself"))
        terminal.sendline("my last words")
        terminal.expect(r"\[(\d+)\] ✓ \"my last words\"")
        mine = terminal.match.group(1)
        terminal.sendline("/leave")
        terminal.expect("You left")
        for command in ["/leave", "/members", "/add bob"]:
            terminal.sendline(command)
            terminal.expect(re.escape("You are no longer a member of this group."))
        for command in [f"/edit {mine} changed", f"/delete {mine}"]:  # my own message: why is that I left, not whose it is
            terminal.sendline(command)
            terminal.expect("no longer a member")
            assert "your own" not in terminal.before, terminal.before
        terminal.sendline(f"/delete {mine} me")
        terminal.expect(re.escape(f"[{mine}] deleted for you"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_member_named_like_another_is_told_apart_by_username(server):
    """An impostor who copies Bob's name (a Cyrillic В) cannot pass for him: both show their
    usernames on every line that names them; Alice's own lines stay "You"."""
    with tempfile.TemporaryDirectory() as home:
        alice, bob, _ = _alice_and_crew(server, home)
        impostor = server.register("bob_b", "Вob Builder")
        _befriend(server, bob, impostor)
        group = _group(server, bob, "Office", [alice, impostor])
        terminal, output = _recorded(home)
        terminal.sendline("/list")
        terminal.expect(r"(\d+)\. Office")
        terminal.sendline("/open " + terminal.match.group(1))
        terminal.expect("── Office")
        server.send(bob, "The door code is 4711", conversation=group)
        terminal.expect(re.escape("Bob Builder (@bob): The door code is 4711"))
        server.send(impostor, "Please send me the code", conversation=group)
        terminal.expect(re.escape("Вob Builder (@bob_b): Please send me the code"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        assert "Bob Builder: " not in output.getvalue() and "Вob Builder: " not in output.getvalue(), \
            "no line names either of them without a username"


def test_direct_chats_with_look_alike_names_are_listed_with_usernames(server):
    with tempfile.TemporaryDirectory() as home:
        alice, bob, _ = _alice_and_crew(server, home)
        impostor = server.register("bob_b", "Вob Builder")
        terminal, _ = _recorded(home)
        server.send(impostor, "hi, it's Bob, new number", recipient=alice["user"]["id"])
        terminal.expect(re.escape("New message from Вob Builder (@bob_b): hi, it's Bob, new number"))
        terminal.sendline("/list")
        terminal.expect(r"\d+\. Вob Builder \(@bob_b\)")
        terminal.expect(r"\d+\. Bob Builder \(@bob\)")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_send_refused_while_the_client_was_closed_shows_in_the_list_and_offers_delete_not_retry(server):
    """Written offline, the client killed, removed from the group meanwhile: at the next start the
    send is refused. The list says a message was not sent, and its line offers /delete, not a
    /retry that could only be refused again."""
    with tempfile.TemporaryDirectory() as home:
        alice, bob, group = _alice_and_crew(server, home)
        me = alice["user"]["id"]
        terminal = _terminal(home)
        terminal.sendline("/list")
        terminal.expect(r"(\d+)\. Crew")
        terminal.sendline("/open " + terminal.match.group(1))
        terminal.expect("── Crew")
        server.stop()
        terminal.expect(r"\[offline")
        terminal.sendline("written on the train")
        terminal.expect(re.escape('(sending) "written on the train"'))
        terminal.kill(9)
        terminal.expect(pexpect.EOF)
        server.start()
        requests.post(f"{server.url}/v1/conversations/{group}/members/{me}/remove", json={"clientId": str(uuid.uuid4())},
                      headers=_auth(bob), timeout=10).raise_for_status()
        terminal = _terminal(home)
        terminal.sendline("/list")
        terminal.expect(r"(\d+)\. Crew")
        terminal.sendline("/open " + terminal.match.group(1))
        terminal.expect(r"\[(\d+)\] [^\r\n]*written on the train ! failed: You are no longer a member of this group\. — /delete (\d+) me")
        assert terminal.match.group(1) == terminal.match.group(2), "the line names its own number"
        terminal.sendline("/list")
        terminal.expect(r"\d+\. Crew \[group, left\] \(! 1 not sent\)")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
