"""`parley chat` driven through a pseudo-terminal (pexpect), against a real server."""
import os
import re
import subprocess
import time
import tempfile

import pexpect
import requests

from conftest import BINARY


def _run(arguments):
    output, status = pexpect.run(" ".join([BINARY] + [pexpect_quote(a) for a in arguments]), encoding="utf-8", timeout=60, withexitstatus=True)
    return output, status


def pexpect_quote(argument):
    return "'" + argument.replace("'", "'\\''") + "'"


def test_sign_in_chat_live_and_script_it(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        output, status = _run(["chat", "register", "--home", home, "--server", server.url, "--username", "alice",
                               "--display-name", "Alice Liddell", "--password", "wonderland1"])
        assert status == 0 and "Registered and signed in as Alice Liddell" in output

        terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(40, 120))
        terminal.expect("Signed in as Alice Liddell")
        terminal.expect(r"No conversations yet|\[online\]")
        terminal.sendline("/new bob")
        terminal.expect("Chat with Bob Builder")
        terminal.expect("Say hello!")
        terminal.sendline("Hello Bob, from the terminal 👋")
        terminal.expect("✓ \"Hello Bob, from the terminal")
        history = requests.get(f"{server.url}/v1/conversations?limit=5", headers={"Authorization": "Bearer " + bob["token"]}).json()
        conversation = history["conversations"][0]["id"]
        assert history["conversations"][0]["lastMessage"]["text"] == "Hello Bob, from the terminal 👋"

        # Bob reads it (over REST): the read mark shows; then his answer arrives live.
        requests.post(f"{server.url}/v1/conversations/{conversation}/receipts", json={"readSeq": 1},
                      headers={"Authorization": "Bearer " + bob["token"]}).raise_for_status()
        terminal.expect("✓✓ read \"Hello Bob")
        server.send(bob, "Hi Alice! Got it.", conversation=conversation)
        terminal.expect("Bob Builder: Hi Alice! Got it.")
        terminal.sendline("/quit")
        terminal.expect("Bye.")
        terminal.expect(pexpect.EOF)

        # The scripted commands.
        output, status = _run(["chat", "send", "--home", home, "--to", "bob", "sent from a script"])
        assert status == 0 and "Sent to Bob Builder." in output
        output, status = _run(["chat", "list", "--home", home])
        assert status == 0 and "1. Bob Builder" in output and "You: sent from a script" in output
        output, status = _run(["chat", "send", "--home", home, "--to", "nobody_here", "hello?"])
        assert status != 0 and "No user named 'nobody_here'" in output
        history = requests.get(f"{server.url}/v1/conversations/{conversation}/messages",
                               headers={"Authorization": "Bearer " + bob["token"]}).json()["messages"]
        assert [m["text"] for m in history] == ["Hello Bob, from the terminal 👋", "Hi Alice! Got it.", "sent from a script"]


def alice_chatting_with_bob(server, home, timeout):
    """Bob signed up; Alice signed in through the terminal client, in a new chat with him."""
    bob = server.register("bob", "Bob Builder")
    _run(["chat", "register", "--home", home, "--server", server.url, "--username", "alice", "--password", "wonderland1"])
    terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=timeout, dimensions=(40, 120))
    terminal.expect(r"\[online\]")
    terminal.sendline("/new bob")
    terminal.expect("Say hello!")
    return bob, terminal


def test_messages_written_while_the_server_is_down_go_out_when_it_returns(server):
    with tempfile.TemporaryDirectory() as home:
        bob, terminal = alice_chatting_with_bob(server, home, timeout=30)
        server.stop()
        terminal.expect(r"\[offline")
        terminal.sendline("written offline")
        terminal.expect("\\(sending\\) \"written offline\"")
        server.start()
        terminal.expect("✓ \"written offline\"", timeout=60)
        conversations = requests.get(f"{server.url}/v1/conversations", headers={"Authorization": "Bearer " + bob["token"]}).json()
        assert conversations["conversations"][0]["lastMessage"]["text"] == "written offline"
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_dead_line_shows_offline_within_seconds_and_the_message_goes_once_when_it_returns(server):
    """Not a closed socket: a relay that stops forwarding. The heartbeat (1 s idle, 1 s timeout here)
    must notice, the message written meanwhile waits, and it arrives once when the line is back."""
    from relay import FreezableRelay
    relay = FreezableRelay(server.port)
    try:
        with tempfile.TemporaryDirectory() as home:
            bob = server.register("bob", "Bob Builder")
            _run(["chat", "register", "--home", home, "--server", f"http://127.0.0.1:{relay.port}", "--username", "alice",
                  "--password", "wonderland1"])
            environment = dict(os.environ, PARLEY_HEARTBEAT="1:1")
            terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=30, dimensions=(40, 120), env=environment)
            terminal.expect(r"\[online\]")
            terminal.sendline("/new bob")
            terminal.expect("Say hello!")
            relay.freeze()
            terminal.expect(r"\[offline", timeout=6)
            terminal.sendline("written on a dead line")
            terminal.expect("\\(sending\\) \"written on a dead line\"")
            relay.thaw()
            terminal.expect(r"\[online\]", timeout=30)
            terminal.expect("✓ \"written on a dead line\"", timeout=30)
            terminal.sendline("/quit")
            terminal.expect(pexpect.EOF)
            listed = requests.get(f"{server.url}/v1/conversations", headers={"Authorization": "Bearer " + bob["token"]}).json()
            conversation = listed["conversations"][0]["id"]
            history = requests.get(f"{server.url}/v1/conversations/{conversation}/messages",
                                   headers={"Authorization": "Bearer " + bob["token"]}).json()
            assert [m["text"] for m in history["messages"]] == ["written on a dead line"], "stored exactly once"
    finally:
        relay.close()


def test_scripts_fail_with_one_line_and_a_user_without_conversations_can_run_commands_again(server):
    with tempfile.TemporaryDirectory() as home:
        output, status = _run(["chat", "login", "--home", home, "--server", server.url, "--username", "nobody", "--password", "password123"])
        assert status == 1 and "USAGE" not in output and "Wrong username or password" in output
        output, status = _run(["chat", "register", "--home", home, "--server", server.url, "--username", "lonely", "--password", "lonely-one-1"])
        assert status == 0
        for _ in range(2):
            output, status = _run(["chat", "list", "--home", home])
            assert status == 0 and "No conversations yet" in output, output
        output, status = _run(["chat", "send", "--home", home, "--to", "nobody", "hi"])
        assert status == 1 and "No user named 'nobody'" in output and "USAGE" not in output
        output, status = _run(["chat", "list", "--home", home, "--bogus"])
        assert status == 64 and "USAGE" in output.upper()


def test_home_defaults_to_the_home_environment_variable(server):
    with tempfile.TemporaryDirectory() as home:
        environment = dict(os.environ, HOME=home)
        environment.pop("PARLEY_HOME", None)
        output = subprocess.run([BINARY, "chat", "register", "--server", server.url, "--username", "homer", "--password", "doh-doh-doh"],
                                env=environment, capture_output=True, text=True, timeout=60)
        assert output.returncode == 0, output.stderr
        assert os.path.isdir(os.path.join(home, ".parley"))


def test_tail_to_a_pipe_shows_each_message_as_it_comes(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob)
        server.send(bob, "first", recipient=alice_id)
        tail = subprocess.Popen([BINARY, "chat", "tail", "--home", home, "--with", "bob", "--count", "1", "--exit-after", "2"],
                                stdout=subprocess.PIPE, text=True)
        try:
            assert "first" in tail.stdout.readline()  # the recent message, before any exit
            server.send(bob, "second", recipient=alice_id)
            assert "second" in tail.stdout.readline()  # flushed at once, not at exit
            server.send(bob, "third", recipient=alice_id)
            assert "third" in tail.stdout.readline()
            assert tail.wait(timeout=20) == 0
        finally:
            tail.kill()


def test_the_interactive_client_keeps_the_typed_line_refuses_unknown_commands_and_shows_my_other_device(server):
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as phone:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob)
        _run(["chat", "login", "--home", phone, "--server", server.url, "--username", "alice", "--password", "wonderland1"])
        terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(40, 120))
        terminal.expect(r"\[online\]")
        terminal.sendline("/new bob")
        terminal.expect("Say hello!")
        terminal.sendline("/lsit")
        terminal.expect("Unknown command /lsit")
        terminal.send("half ")  # no Enter yet
        time.sleep(0.5)
        server.send(bob, "interrupting you", recipient=alice_id)
        terminal.expect("Bob Builder: interrupting you")
        terminal.send("done\r")
        terminal.expect("✓ \"half done\"")
        output, status = _run(["chat", "send", "--home", phone, "--to", "bob", "from my phone"])
        assert status == 0, output
        terminal.expect("You: from my phone")
        terminal.sendcontrol("c")
        terminal.expect("Bye.")
        terminal.expect(pexpect.EOF)
        listed = requests.get(f"{server.url}/v1/conversations", headers={"Authorization": "Bearer " + bob["token"]}).json()
        conversation = listed["conversations"][0]["id"]
        texts = [m["text"] for m in requests.get(f"{server.url}/v1/conversations/{conversation}/messages",
                                                 headers={"Authorization": "Bearer " + bob["token"]}).json()["messages"]]
        assert texts == ["interrupting you", "half done", "from my phone"], texts


def _auth(session):
    return {"Authorization": "Bearer " + session["token"]}


def _register_alice(server, home, finder, display_name=None):
    """Registers `alice` through the terminal client into `home`; returns her user id, found as `finder` would."""
    named = ["--display-name", display_name] if display_name else []
    _run(["chat", "register", "--home", home, "--server", server.url, "--username", "alice", *named, "--password", "wonderland1"])
    return requests.get(f"{server.url}/v1/users?query=ali", headers=_auth(finder)).json()["users"][0]["id"]


def test_a_group_of_three_from_the_terminal(server):
    """Alice (the terminal) makes a group with Bob (a contact: added) and Carol (a stranger: invited),
    sees sender names and entry lines, manages it, then answers an invitation and leaves a group."""
    import uuid
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        carol = server.register("carol", "Carol Danvers")
        alice_id = _register_alice(server, home, bob, "Alice Liddell")
        server.send(bob, "hi Alice", recipient=alice_id)
        terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(40, 160))
        terminal.expect(r"\[online\]")
        terminal.sendline("/new bob")
        terminal.expect("Chat with Bob Builder")
        terminal.sendline("hi Bob")  # now both have written: contacts
        terminal.expect("✓ \"hi Bob\"")

        terminal.sendline('/group new "Trip 2026" bob @carol')
        terminal.expect(r"Invited \(they join when they accept\): Carol Danvers")
        terminal.expect("── Trip 2026")
        terminal.expect("You created the group “Trip 2026”")
        terminal.expect("You added Bob Builder")
        group = next(c["id"] for c in server.conversations(bob) if c["kind"] == "group")
        invitation = requests.get(f"{server.url}/v1/invitations", headers=_auth(carol)).json()["invitations"][0]
        assert invitation["conversationId"] == group and invitation["inviter"]["username"] == "alice"
        requests.post(f"{server.url}/v1/invitations/{group}/accept", json={"clientId": str(uuid.uuid4())},
                      headers=_auth(carol)).raise_for_status()
        terminal.expect("Carol Danvers joined")
        server.send(bob, "Hello group", conversation=group)
        terminal.expect("Bob Builder: Hello group")
        server.send(carol, "Hi from Carol", conversation=group)
        terminal.expect("Carol Danvers: Hi from Carol")

        terminal.sendline("/members")
        terminal.expect(r"You \(@alice\) — Owner")
        terminal.expect(r"Bob Builder \(@bob\)")
        terminal.expect(r"Carol Danvers \(@carol\)")
        terminal.sendline("/admin bob")
        terminal.expect("You made Bob Builder an admin")
        terminal.sendline("/rename Trip 2027")
        terminal.expect("You renamed the group to “Trip 2027”")
        terminal.sendline("/remove carol")
        terminal.expect("You removed Carol Danvers")
        terminal.sendline("Bye Carol")
        terminal.expect("✓ \"Bye Carol\"")
        carols = [m.get("text") or m["entry"]["type"] for m in server.history(carol, group)]
        assert "Hi from Carol" in carols and "Bye Carol" not in carols and carols[-1] == "removed", carols

        # Carol is no contact of Alice: her group is an invitation.
        requests.post(f"{server.url}/v1/groups", json={"clientId": str(uuid.uuid4()), "title": "Book club", "memberIds": [alice_id]},
                      headers=_auth(carol)).raise_for_status()
        terminal.expect(re.escape("Carol Danvers (@carol) invited you to “Book club”"))
        terminal.sendline("/accept 1")
        terminal.expect("a number /invites showed")  # numbers are those of a list she saw
        terminal.sendline("/remove")
        terminal.expect("Usage: /remove USER")
        terminal.sendline("/invites")
        terminal.expect(re.escape("1. “Book club” — Carol Danvers (@carol) invited you · 1 member"))
        # Another stranger's invitation, newer, comes in before she answers: 1 still means Book club.
        dave = server.register("dave", "Dave Lister")
        requests.post(f"{server.url}/v1/groups", json={"clientId": str(uuid.uuid4()), "title": "Spam club", "memberIds": [alice_id]},
                      headers=_auth(dave)).raise_for_status()
        terminal.expect(re.escape("Dave Lister (@dave) invited you to “Spam club”"))
        terminal.sendline("/accept 1")
        terminal.expect("── Book club")
        terminal.expect("You joined")
        terminal.sendline("/leave")
        terminal.expect("You left")
        terminal.sendline("anyone?")
        terminal.expect("no longer a member")
        terminal.sendline("/help")
        terminal.expect("/group new TITLE USER")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
        texts = [m.get("text") for m in server.history(carol, next(c["id"] for c in server.conversations(carol) if c.get("title") == "Book club"))]
        assert "anyone?" not in texts


def test_typed_characters_echo_whole_and_escape_keys_type_nothing(server):
    """A pasted colour code and keys the line has no use for send escape sequences: none of them may
    reach the message (they once put `[D` and `[31m` into it), and 東京 echoes as itself, not byte by
    byte."""
    with tempfile.TemporaryDirectory() as home:
        bob, terminal = alice_chatting_with_bob(server, home, timeout=20)
        terminal.send("hello\x1b[A\x1b[5~\x1b[31m 東京\x1b[0m\x1bOP!")
        terminal.expect("hello 東京!")
        sent(terminal, server, bob, "hello 東京!")
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_the_line_is_edited_where_the_cursor_is(server):
    """← → Home End (and Ctrl-A, Ctrl-E) move the cursor over whole characters, wide ones included;
    typing, Backspace, Delete and Ctrl-U act where it is; Enter sends the whole line."""
    with tempfile.TemporaryDirectory() as home:
        bob, terminal = alice_chatting_with_bob(server, home, timeout=20)
        keys = [
            "helo", "\x1b[D", "l",              # a letter put in the middle: hello
            "\x1b[F", " 東京x", "\x7f",          # End, typed at the end, Backspace: hello 東京
            "\x1b[D\x1b[D", "\x7f", " ",        # over two wide characters, the space rubbed out and typed again
            "\x1bOH", "\x1b[3~", "h",            # Home (as xterm's application mode sends it), Delete, retyped
            "\x05", "\x1b[D", "\x1b[C", "!",    # Ctrl-E, ← →: hello 東京!
            "\x01", "\x1b[C\x1b[C", "\x15",      # Ctrl-A, → →, Ctrl-U: llo 東京!
            "he",
        ]
        for key in keys:
            terminal.send(key)
        sent(terminal, server, bob, "hello 東京!")
        # Home then End: what is typed goes at the end again.
        terminal.send("bye\x1b[H\x1b[1~\x1b[4~ now\r")
        terminal.expect("✓ \"bye now\"")
        assert last_text(server, bob) == "bye now"
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_damaged_local_copy_is_set_aside_and_the_chats_come_back_from_the_server(server):
    """A local database that is no database any more (a damaged disk, a file written over) once
    stopped every start with SQLite's error. It is moved aside, said once, and the chats are read
    again from the server."""
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        _run(["chat", "register", "--home", home, "--server", server.url, "--username", "alice", "--password", "wonderland1"])
        output, status = _run(["chat", "send", "--home", home, "--to", "bob", "before the damage"])
        assert status == 0, output
        [database] = [name for name in os.listdir(home) if name.startswith("account-") and name.endswith(".sqlite")]
        with open(os.path.join(home, database), "r+b") as file:
            file.write(b"\x00not a database" * 512)
        output, status = _run(["chat", "list", "--home", home])
        assert status == 0 and "cannot be read" in output and "moved to" in output, output
        assert "You: before the damage" in output, output
        assert any(".damaged-" in name for name in os.listdir(home))
        output, status = _run(["chat", "list", "--home", home])
        assert status == 0 and "cannot be read" not in output and "You: before the damage" in output, output
        assert last_text(server, bob) == "before the damage"


def sent(terminal, server, bob, text):
    """Enter sends the line: the client shows it sent, and Bob has it."""
    terminal.send("\r")
    terminal.expect(f"✓ \"{text}\"")
    assert last_text(server, bob) == text


def last_text(server, account):
    listed = requests.get(f"{server.url}/v1/conversations", headers={"Authorization": "Bearer " + account["token"]}).json()
    return listed["conversations"][0]["lastMessage"]["text"]
