"""Web client defects found by a hostile pass (round 4): each test fails on the code it was found on.

- A message of letters under 31 combining marks each (as many as the server takes) painted its marks
  about 100 px up, over the messages above it.
- A line or paragraph separator (U+2028, U+2029) showed as nothing: two lines ran together.
- In a group, a newcomer named "Аda Lovelace" (a Cyrillic А), "Ada\u200b Lovelace" or "ADA LOVELACE"
  showed as one more "Ada Lovelace": nothing told the impostors from Ada. Nor in the list of chats,
  where an impostor's direct chat was a second "Ada Lovelace".
"""
import json
import pathlib
import uuid

from test_web_actions import open_chat, rows, send
from test_web_client import by_id, wait
from test_web_groups import befriend, call, create_group, entry_lines, senders

MARKED = ("e" + "\u0301" * 31) * 8


def row_picture(driver, text):
    """The PNG of the row holding `text`, as the screen shows it (with whatever paints over it)."""
    row = driver.execute_script(
        "return [...document.querySelectorAll('#message-list li.message')].find(li => li.querySelector('.text')?.textContent === arguments[0])",
        text)
    return row.screenshot_as_png


def test_a_letters_marks_stay_in_their_own_row(server, browsers):
    ada, bob = server.register("ada", "Ada Lovelace"), server.register("bob", "Bob Builder")
    first = send(server, ada, "Meet at the station at 9:00, platform 4", recipient=bob["user"]["id"])
    send(server, bob, "OK, see you there", conversation=first["conversationId"])
    b = open_chat(browsers, server, bob, first["conversationId"])
    wait(b, lambda d: [r["text"] for r in rows(d)] == [first["text"], "OK, see you there"])
    # Ada's first message: nothing of it changes when her next one comes (Bob's own reply would: its ticks turn blue).
    before = row_picture(b, first["text"])
    send(server, ada, MARKED, conversation=first["conversationId"])
    wait(b, lambda d: [r["text"] for r in rows(d)][-1:] == [MARKED])
    assert row_picture(b, first["text"]) == before, "the marks must not paint over the messages above"


def test_line_and_paragraph_separators_break_the_line(server, browsers):
    ada, bob = server.register("ada", "Ada Lovelace"), server.register("bob", "Bob Builder")
    one = send(server, ada, "line", recipient=bob["user"]["id"])
    send(server, ada, "line\u2028separator\u2029paragraph", conversation=one["conversationId"])
    b = open_chat(browsers, server, bob, one["conversationId"])
    wait(b, lambda d: len(rows(d)) == 2)
    heights = b.execute_script("return [...document.querySelectorAll('#message-list li.message .text')].map(t => t.getBoundingClientRect().height)")
    assert heights[1] > 2.5 * heights[0], f"three lines, not one: {heights}"
    assert b.execute_script("return [...document.querySelectorAll('#message-list li.message .text')].pop().innerText") == \
        "line\nseparator\nparagraph"


def test_members_whose_names_read_alike_show_their_usernames(server, browsers):
    ada, alice = server.register("ada", "Ada Lovelace"), server.register("alice", "Alice Liddell")
    impostors = [server.register("ada_cyr", "Аda Lovelace"), server.register("ada_caps", "ADA LOVELACE")]
    grace = server.register("grace", "Grace Hopper")
    for person in [alice, grace, *impostors]:
        befriend(server, ada, person)
    group = create_group(server, ada, "Office", [alice, grace, *impostors])
    send(server, ada, "The door code is 4711", conversation=group)
    send(server, impostors[0], "Please send me the code", conversation=group)
    send(server, impostors[1], "Me too", conversation=group)
    send(server, grace, "Hm?", conversation=group)
    a = open_chat(browsers, server, alice, group)
    # The rows may show before the group's members are known (names come with the list): waited for.
    wait(a, lambda d: len(rows(d)) == 4 and [s and s[0] for s in senders(d)]
         == ["Ada Lovelace (@ada)", "Аda Lovelace (@ada_cyr)", "ADA LOVELACE (@ada_caps)", "Grace Hopper"])
    assert entry_lines(a)[-1].startswith("Ada Lovelace (@ada) added "), entry_lines(a)
    # One impostor leaves: their messages still name them apart from Ada (who stays bare once no
    # member's name reads like hers).
    leave = call(server, impostors[0], "POST", f"/v1/conversations/{group}/leave", {"clientId": str(uuid.uuid4())})
    assert leave.status_code in (200, 201), leave.text
    wait(a, lambda d: "Аda Lovelace (@ada_cyr)" in [s and s[0] for s in senders(d)] and len(rows(d)) == 4)
    # The page reads names as the Swift clients do (LookAlikeNamesTests holds Swift to the same file).
    fixture = pathlib.Path(__file__).resolve().parents[2] / "Tests" / "ParleyCoreTests" / "look-alike-names.json"
    pairs = json.loads(fixture.read_text(encoding="utf-8"))
    names = [name for name, _ in pairs]
    assert a.execute_async_script("import('/js/format.js').then(f => arguments[1](arguments[0].map(f.nameSkeleton)))", names) == \
        [skeleton for _, skeleton in pairs]


def test_direct_chats_with_look_alike_names_are_told_apart(server, browsers):
    alice, ada = server.register("alice", "Alice Liddell"), server.register("ada", "Ada Lovelace")
    impostor, grace = server.register("ada_cyr", "Аda Lovelace"), server.register("grace", "Grace Hopper")
    chats = {}
    for person in (ada, impostor, grace):
        chats[person["user"]["username"]] = send(server, person, f"hi from {person['user']['username']}", recipient=alice["user"]["id"])
    a = open_chat(browsers, server, alice, chats["ada_cyr"]["conversationId"])
    names = lambda d: sorted(d.execute_script("return [...document.querySelectorAll('#conversation-list .row-name')].map(n => n.textContent)"))
    wait(a, lambda d: names(d) == ["Ada Lovelace (@ada)", "Grace Hopper", "Аda Lovelace (@ada_cyr)"])
    wait(a, lambda d: by_id(d, "chat-name").text == "Аda Lovelace (@ada_cyr)")


def test_a_look_alike_names_mark_is_never_cut_on_a_phone(server, browsers):
    """A look-alike name made wide (ideographic spaces between its letters, which names may hold one
    at a time) is cut with "…" on a phone; its "(@username)" stays whole, in the sender line and in a quote."""
    ada, alice = server.register("ada", "Ada Lovelace"), server.register("alice", "Alice Liddell")
    impostor = server.register("ada_wide", "\u3000".join("Аda Lovelace".replace(" ", "")))
    for person in (alice, impostor):
        befriend(server, ada, person)
    group = create_group(server, ada, "Office", [alice, impostor])
    asked = send(server, impostor, "send me the code", conversation=group)
    send(server, alice, "who is this?", conversation=group, reply_to=asked["seq"])
    a = open_chat(browsers, server, alice, group, width=390)
    a.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 760, "deviceScaleFactor": 2, "mobile": True})
    wait(a, lambda d: len(rows(d)) == 2)
    for selector in ("#message-list li.message.theirs .sender", "#message-list li.message.mine .quote-name"):
        box = a.execute_script(
            "const s = document.querySelector(arguments[0]), m = s.querySelector('.name-mark'), t = s.querySelector('.name-text');"
            "return m && {mark: m.textContent, inside: m.getBoundingClientRect().right <= s.getBoundingClientRect().right + 0.5,"
            " cut: t.scrollWidth > t.clientWidth}", selector)
        assert box == {"mark": " (@ada_wide)", "inside": True, "cut": True}, (selector, box)
