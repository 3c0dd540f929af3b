"""Web client defects found by a hostile pass (round 3): each test fails on the code it was found on.

- A reply quoting a long message (or a group sender with a long name) made its bubble as wide as the
  quote's one unbroken line: on a phone the bubble ran off the left edge and the reply's own text
  could not be seen (at desktop width it ran under the conversation list).
- Search results already on screen kept showing a message deleted for everyone, and text edited away.
- A draft typed in one chat was gone after a look at another chat (and after a reload).
- An edit cut short by a removal from the group came back as the text of a new message.
- Signing out and in as someone else on the same page left the first account's views listening: its
  composer took the second account's text into the first account's outbox, to be sent as them.
"""
from selenium.webdriver.common.by import By

from selenium.webdriver.common.keys import Keys

from test_web_actions import act, choose, open_chat, open_menu, rows, send
from test_web_client import by_id, wait
from test_web_groups import befriend, create_group, crew, open_panel, people, row
from test_web_search import STATE

# As many marks as the server takes on one character (32 code points): Khmer's draw ~700 px wide here.
WIDE = "a" + "\u17b7" * 31
LONG = ("Can you pick up the kids from school today at 3pm? I have a meeting that runs late "
        "and the car is in the shop again.")

# Each message bubble's box against the scrolling message area's box.
BOXES = """const area = document.getElementById('messages').getBoundingClientRect();
    return [...document.querySelectorAll('#message-list li.message')].map(li => {
      const box = li.querySelector('.bubble').getBoundingClientRect();
      return {text: li.querySelector('.text').textContent, left: box.left - area.left, right: area.right - box.right}; })"""


def outside(driver):
    """The bubbles reaching outside the message area (more than a pixel)."""
    return [b for b in driver.execute_script(BOXES) if b["left"] < -1 or b["right"] < -1]


def test_a_reply_to_a_long_message_and_a_long_sender_name_keep_the_bubble_on_screen(server, browsers):
    ada, alan = people(server, "ada", "alan")
    grace = server.register("grace", "Grace Brewster Murray Hopper, Rear Admiral, of the Harvard Mark")
    befriend(server, ada, grace)
    befriend(server, ada, alan)
    group = create_group(server, ada, "Plans", [grace, alan])
    original = send(server, grace, LONG, conversation=group)
    send(server, alan, "Sure", conversation=group, reply_to=original["seq"])       # theirs, for Ada
    send(server, ada, "Thanks", conversation=group, reply_to=original["seq"])      # mine
    send(server, grace, "ok", conversation=group)                                   # a long sender name over a short text
    for width in (390, 1100):
        a = open_chat(browsers, server, ada, group, width=width)
        if width < 500:  # headless windows are at least 500 px wide: a phone's screen, emulated
            a.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": 760, "deviceScaleFactor": 2, "mobile": True})
        wait(a, lambda d: [r["text"] for r in rows(d)] == [LONG, "Sure", "Thanks", "ok"])
        assert outside(a) == [], f"at {width}px the bubbles must stay inside the message area: {outside(a)}"
        assert a.execute_script("const m = document.getElementById('messages'); return m.scrollWidth <= m.clientWidth"), \
            f"at {width}px the message area must not scroll sideways"


def test_open_search_results_drop_a_message_deleted_for_everyone_and_text_edited_away(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    code = send(server, alice, "The door code is 4711, keep it secret", recipient=bob["user"]["id"])
    conversation = code["conversationId"]
    meeting = send(server, alice, "the secret meeting moved to Friday", conversation=conversation)
    b = open_chat(browsers, server, bob, conversation)
    wait(b, lambda d: len(rows(d)) == 2)
    by_id(b, "search-messages").click()
    by_id(b, "message-search-input").send_keys("secret")
    texts = lambda d: [r["text"] for g in d.execute_script(STATE)["groups"] for r in g["results"]]
    wait(b, lambda d: d.execute_script(STATE)["query"] == "secret" and len(texts(d)) == 2)

    act(server, alice, conversation, code["seq"], "delete")
    act(server, alice, conversation, meeting["seq"], "edit", text="the meeting moved to Friday")
    wait(b, lambda d: d.execute_script("return !!document.querySelector('#message-list li.message.deleted')"))
    wait(b, lambda d: all(r["text"] != "the secret meeting moved to Friday" for r in rows(d)))
    # The dialog is still open on Bob's screen: what was deleted for everyone must leave it, and so
    # must the words edited away (as they left the chat, the list and the screen reader's region).
    wait(b, lambda d: not any("4711" in text for text in texts(d)), timeout=5)
    assert "4711" not in b.find_element(By.ID, "message-search-results").text
    wait(b, lambda d: "the secret meeting moved to Friday" not in texts(d), timeout=5)


def test_a_draft_typed_in_one_chat_is_still_there_after_a_look_at_another(server, browsers):
    alice, bob, carol = (server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder"),
                         server.register("carol", "Carol Danvers"))
    first = send(server, bob, "Are you coming tonight?", recipient=alice["user"]["id"])
    with_bob = first["conversationId"]
    with_carol = send(server, carol, "What was the address again?", recipient=alice["user"]["id"])["conversationId"]
    a = open_chat(browsers, server, alice, with_bob)
    draft = "Yes, but I will be a bit late because"
    by_id(a, "composer-input").send_keys(draft)
    row(a, "Carol Danvers").find_element(By.TAG_NAME, "button").click()   # a look at the other chat
    wait(a, lambda d: [r["text"] for r in rows(d)] == ["What was the address again?"])
    assert by_id(a, "composer-input").get_attribute("value") == "", "Carol's chat has no draft"
    row(a, "Bob Builder").find_element(By.TAG_NAME, "button").click()
    wait(a, lambda d: [r["text"] for r in rows(d)] == ["Are you coming tonight?"])
    assert by_id(a, "composer-input").get_attribute("value") == draft, "the draft of Bob's chat comes back with it"
    # Answering a message is part of the draft, and both outlive a reload.
    open_menu(a, first["seq"])
    choose(a, "Reply")
    wait(a, lambda d: by_id(d, "composer-context").is_displayed())
    a.refresh()
    wait(a, lambda d: [r["text"] for r in rows(d)] == ["Are you coming tonight?"])
    assert by_id(a, "composer-input").get_attribute("value") == draft
    assert by_id(a, "composer-context").is_displayed() and "Are you coming tonight?" in by_id(a, "composer-context").text
    by_id(a, "composer-input").send_keys(Keys.ENTER)
    wait(a, lambda d: [r["text"] for r in rows(d)] == ["Are you coming tonight?", draft])
    assert server.history(alice, with_bob)[-1]["replyTo"]["seq"] == first["seq"]
    a.refresh()
    wait(a, lambda d: len(rows(d)) == 2)
    assert by_id(a, "composer-input").get_attribute("value") == "", "a sent draft is gone"


def test_an_edit_cut_short_by_a_removal_does_not_come_back_as_a_new_message(server, browsers):
    import uuid

    from test_web_groups import call

    ada, grace, alan, group = crew(server, "Plans")
    mine = send(server, alan, "Meet at 10", conversation=group)
    l = open_chat(browsers, server, alan, group)
    wait(l, lambda d: [r["text"] for r in rows(d)] == ["Meet at 10"])
    box = by_id(l, "composer-input")
    box.send_keys("my unsent draft")
    open_menu(l, mine["seq"])
    choose(l, "Edit")
    wait(l, lambda d: by_id(d, "composer-input").get_attribute("value") == "Meet at 10")
    box.send_keys(Keys.BACKSPACE, "1")   # editing it to "Meet at 11" when Ada removes Alan
    removed = call(server, ada, "POST", f"/v1/conversations/{group}/members/{alan['user']['id']}/remove", {"clientId": str(uuid.uuid4())})
    assert removed.status_code == 201, removed.text
    wait(l, lambda d: by_id(d, "left-notice").is_displayed())
    added = call(server, ada, "POST", f"/v1/conversations/{group}/members", {"clientId": str(uuid.uuid4()), "userIds": [alan["user"]["id"]]})
    assert added.status_code == 201, added.text
    wait(l, lambda d: by_id(d, "composer").is_displayed())
    # The edit ended without being saved: the composer holds what it held before the edit, not the
    # edited text as a new message that Enter would send next to the original.
    assert by_id(l, "composer-input").get_attribute("value") == "my unsent draft"


def test_a_second_account_signed_in_on_the_same_page_sends_as_itself_only(server, browsers):
    """Signing out and in as someone else without a reload: the first account's chat view must not
    still answer the composer (it kept its listeners, and would queue the text in its own outbox)."""
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    carol, dave = server.register("carol", "Carol Danvers"), server.register("dave", "Dave Lister")
    with_bob = send(server, bob, "hi Alice", recipient=alice["user"]["id"])["conversationId"]
    with_dave = send(server, dave, "hi Carol", recipient=carol["user"]["id"])["conversationId"]
    a = open_chat(browsers, server, alice, with_bob)
    by_id(a, "composer-input").send_keys("a draft of Alice's")
    by_id(a, "menu-button").click()
    by_id(a, "logout").click()
    wait(a, lambda d: by_id(d, "auth-view").is_displayed())
    by_id(a, "auth-username").send_keys("carol")
    by_id(a, "auth-password").send_keys("password123")
    by_id(a, "auth-submit").click()
    wait(a, lambda d: by_id(d, "app-view").is_displayed())
    a.get(server.url + "/#/c/" + with_dave)
    wait(a, lambda d: [r["text"] for r in rows(d)] == ["hi Carol"])
    assert by_id(a, "composer-input").get_attribute("value") == "", "Alice's draft is not Carol's"
    by_id(a, "composer-input").send_keys("for Dave only", Keys.ENTER)
    wait(a, lambda d: [m["text"] for m in server.history(carol, with_dave)] == ["hi Carol", "for Dave only"])
    alice_outbox = a.execute_script("return localStorage.getItem(arguments[0])", f"parley.outbox.{alice['user']['id']}")
    assert "for Dave only" not in (alice_outbox or ""), "Carol's text was queued as Alice's"
    assert a.execute_script("return localStorage.getItem(arguments[0])", f"parley.drafts.{alice['user']['id']}") is None, \
        "signing out drops the account's drafts"
    assert [m["text"] for m in server.history(bob, with_bob)] == ["hi Alice"]
    # The second account's own views answer, once each: the message menu, and the group dialog.
    open_menu(a, server.history(carol, with_dave)[-1]["seq"])
    choose(a, "Edit")
    wait(a, lambda d: by_id(d, "composer-input").get_attribute("value") == "for Dave only")
    by_id(a, "composer-input").send_keys(Keys.ESCAPE)
    by_id(a, "new-group").click()
    wait(a, lambda d: by_id(d, "new-group-dialog").get_attribute("open") is not None)
    assert len(a.find_elements(By.CSS_SELECTOR, "dialog[open]")) == 1


def test_one_character_wider_than_a_phone_is_clipped_not_scrolled(server, browsers):
    """A letter under many combining marks is one character: no wrapping can break it. In a
    message, in the group's name (the chat's entries, its panel) it is cut at the edge, and nothing
    scrolls sideways (the message area cannot: a bubble may not clip, its actions button is outside)."""
    ada, grace = people(server, "ada", "grace")
    befriend(server, ada, grace)
    group = create_group(server, ada, WIDE, [grace])
    send(server, grace, WIDE, conversation=group)
    a = open_chat(browsers, server, ada, group, width=390, height=800)
    assert a.execute_script("return window.innerWidth") == 390
    wait(a, lambda d: any(r["text"] == WIDE for r in rows(d)))
    assert a.execute_script("return Math.max(...[...document.querySelectorAll('#message-list li.message .text')]"
                            ".map(t => t.getBoundingClientRect().width))") > 390, \
        "the one character is wider than the phone"
    assert a.execute_script("return getComputedStyle(document.getElementById('messages')).overflowX") == "hidden", \
        "the message area cannot be scrolled sideways"
    assert a.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), "nor the page"
    open_panel(a)
    assert a.execute_script("const d = document.getElementById('group-dialog'); return d.scrollWidth <= d.clientWidth"), \
        "the group's panel must not scroll sideways"
    close = a.find_element(By.ID, "group-dialog-close").rect
    title = a.find_element(By.ID, "group-dialog-title").rect
    assert title["x"] + title["width"] <= close["x"] + 1, "the name stops before the close button"
