"""Web client defects found by a hostile pass (round 4): each test fails on the code it was found on.

- A message of letters under 31 combining marks each (as many as the server takes) painted its marks
  about 100 px up, over the messages above it.
- A line or paragraph separator (U+2028, U+2029) showed as nothing: two lines ran together.
"""
from test_web_actions import open_chat, rows, send
from test_web_client import wait

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
