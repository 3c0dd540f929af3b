"""`parley chat` driven through a pseudo-terminal (pexpect), against a real server."""
import os
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


def test_messages_written_while_the_server_is_down_go_out_when_it_returns(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        _run(["chat", "register", "--home", home, "--server", server.url, "--username", "alice", "--password", "wonderland1"])
        terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=30, dimensions=(40, 120))
        terminal.expect(r"\[online\]")
        terminal.sendline("/new bob")
        terminal.expect("Say hello!")
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
