"""`parley chat`'s /search and /open N of a result, through a pseudo-terminal, against a real server."""
import re
import tempfile

import pexpect

from conftest import BINARY
from test_terminal_client import _register_alice
from test_terminal_message_actions import _terminal

BOLD, PLAIN = "\x1b[1m", "\x1b[22m"


def test_search_prints_numbered_highlighted_results_and_open_shows_the_message_in_its_history(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        carol = server.register("carol", "Carol Carter")
        alice_id = _register_alice(server, home, bob, "Alice Liddell")
        conversation = server.send(bob, "warming up", recipient=alice_id)["conversationId"]
        server.send(bob, "see you at the Café de Flore", conversation=conversation)
        server.send(bob, "東京駅で待ってる", conversation=conversation)
        server.send(bob, "新しいiPhoneを買った", conversation=conversation)
        # More than a page after it: opening the result has to load older history to reach it.
        for number in range(60):
            server.send(bob, f"filler {number}", conversation=conversation)
        server.send(carol, "hello from Carol", recipient=alice_id)

        terminal = _terminal(home)
        terminal.sendline("/help")
        terminal.expect(re.escape("/search QUERY"))
        terminal.expect(re.escape("/open N opens result N after a /search, list entry N again after /list"))

        # Accents folded, the match in bold on a terminal, numbered under its conversation's name.
        terminal.sendline("/search cafe")
        terminal.expect(re.escape("Results for “cafe”:"))
        terminal.expect(r"  Bob Builder\r*\n")
        terminal.expect(re.escape("    1. ") + r"[^\r\n]*" + re.escape(f"Bob Builder: see you at the {BOLD}Café{PLAIN} de Flore"))
        terminal.expect(re.escape("/open N to see one"))

        # /open N opens that result: the chat, with the history around the message and the message marked.
        terminal.sendline("/open 1")
        terminal.expect(re.escape("── Chat with Bob Builder"))
        terminal.expect(r"\[\d+\] [^\r\n]*" + re.escape("Bob Builder: warming up"))
        terminal.expect(re.escape("» [") + r"\d+\] [^\r\n]*" + re.escape("Bob Builder: see you at the Café de Flore"))
        terminal.expect(r"\[\d+\] [^\r\n]*" + re.escape("Bob Builder: 東京駅で待ってる"))
        terminal.expect(r"\[\d+\] [^\r\n]*" + re.escape("Bob Builder: filler 2"))
        terminal.sendline("/reply 2 Flore it is")  # the numbers printed are the message commands' numbers
        terminal.expect(re.escape('✓ "Flore it is"'))

        # Japanese, one character: found as a substring.
        terminal.sendline("/search 駅")
        terminal.expect(re.escape("    1. ") + r"[^\r\n]*" + re.escape(f"Bob Builder: 東京{BOLD}駅{PLAIN}で待ってる"))
        # A Latin word glued to Japanese is a word of its own; three letters find the words they begin.
        terminal.sendline("/search ipho")
        terminal.expect(re.escape("    1. ") + r"[^\r\n]*" + re.escape(f"Bob Builder: 新しい{BOLD}iPho{PLAIN}neを買った"))
        terminal.sendline("/search zzqqxx")
        terminal.expect(re.escape("No messages found for “zzqqxx”."))

        # After /list, /open N is a list entry again (Bob's chat is first now, after the reply).
        terminal.sendline("/search cafe")
        terminal.expect(re.escape("/open N to see one"))
        terminal.sendline("/open 2")
        terminal.expect(re.escape("Usage: /open N (a result of the last /search)"))
        terminal.sendline("/list")
        terminal.expect(re.escape("2. Carol Carter"))
        terminal.sendline("/open 2")
        terminal.expect(re.escape("── Chat with Carol Carter"))
        terminal.expect(re.escape("Carol Carter: hello from Carol"))
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_search_without_a_terminal_marks_matches_in_brackets(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob)
        conversation = server.send(bob, "ship PLT-3699 today", recipient=alice_id)["conversationId"]
        # A long message: its result line is the 200 characters around the match, as the web shows it.
        server.send(bob, "a" * 1500 + " sprint PLT-4000 " + "b" * 1500, conversation=conversation)
        terminal = _terminal(home, env={"NO_COLOR": "1"})
        terminal.sendline("/search PLT-3699")
        terminal.expect(re.escape("Bob Builder: ship [PLT-3699] today"))
        terminal.sendline("/search PLT-4000")
        terminal.expect(re.escape("Results for “PLT-4000”:"))
        terminal.expect(re.escape("/open N to see one"))
        line = re.sub(r"\r?\n  ┆ ", "", terminal.before)  # long lines are wrapped under a gutter
        assert "Bob Builder: …" + "a" * 42 + " sprint [PLT-4000] " + "b" * 141 + "…\r" in line, line
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)


def test_a_match_wrapped_onto_the_next_row_leaves_the_gutter_plain(server):
    with tempfile.TemporaryDirectory() as home:
        bob = server.register("bob", "Bob Builder")
        alice_id = _register_alice(server, home, bob)
        word = "pneumonoultramicroscopicsilicovolcanoconiosis"  # wider than the 40-column terminal
        server.send(bob, f"the word {word} again", recipient=alice_id)
        terminal = pexpect.spawn(BINARY, ["chat", "--home", home], encoding="utf-8", timeout=20, dimensions=(24, 40))
        terminal.expect(r"\[online\]")
        terminal.sendline(f"/search {word}")
        terminal.expect(re.escape("/open N to see one"))
        # Bold ends before each break and starts again after the "  ┆ " that continues the row.
        rows = re.findall(r"[^\r\n]+", terminal.before)
        start = next(i for i, row in enumerate(rows) if BOLD in row)
        pieces = rows[start:start + 3]
        assert pieces[0].endswith(PLAIN) and pieces[1].startswith("  ┆ " + BOLD), rows
        assert "┆" not in "".join(re.findall(re.escape(BOLD) + r"(.*?)" + re.escape(PLAIN), "\n".join(pieces))), rows
        shown = "".join(re.sub(r"^  ┆ ", "", row) for row in pieces).replace(BOLD, "").replace(PLAIN, "")
        assert word in shown, rows
        terminal.sendline("/quit")
        terminal.expect(pexpect.EOF)
