"""Reply, react, edit and delete in the web client (docs/protocol.md "Message actions"): real browsers
against a real server. Every wait is on a condition; where something must not have happened yet (a
page that was offline), the page is shown to be offline first (the server counts its sockets) and
the old state is read before it comes back."""
import json
import uuid

import requests
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import page_problems, sign_in
from test_web_client import bubbles, by_id, list_rows, type_and_send, websocket_count
from test_web_groups import wait

# MARK: helpers

# Records the page's hellos and lets a test take the page offline (its socket closes, new ones go to a
# path with no socket behind it; it stays so across a reload) and bring it back (the app reconnects at once and resumes
# from its stream position).
SOCKET_SWITCH = """
    const RealSocket = window.WebSocket;
    window.__hellos = [];
    window.WebSocket = class extends RealSocket {
      constructor(url, ...rest) {
        super(sessionStorage.getItem('test.offline') ? String(url).replace('/v1/ws', '/v1/offline') : url, ...rest);
        window.__socket = this;
        const send = this.send.bind(this);
        this.send = (data) => { if (String(data).includes('"hello"')) window.__hellos.push(JSON.parse(data)); return send(data); };
      }
    };
    window.__goOffline = () => { sessionStorage.setItem('test.offline', '1'); window.__socket?.close(); };
    window.__goOnline = () => new Promise((resolve) => {
      sessionStorage.removeItem('test.offline');
      const socket = window.__socket;
      const kick = () => { window.dispatchEvent(new Event('online')); resolve(); };
      if (socket && socket.readyState !== 3) { socket.addEventListener('close', () => setTimeout(kick, 0)); socket.close(); } else kick();
    });"""

ROWS = """return [...document.querySelectorAll('#message-list li.message')].map(li => ({
    seq: Number(li.dataset.seq) || null, mine: li.classList.contains('mine'),
    text: li.querySelector('.text').textContent, deleted: li.classList.contains('deleted'),
    edited: !!li.querySelector('.meta .edited'), label: li.getAttribute('aria-label'),
    quote: li.querySelector('.quote') && {name: li.querySelector('.quote-name').textContent, text: li.querySelector('.quote-text').textContent},
    reactions: [...li.querySelectorAll('.reaction')].map(b => ({emoji: b.dataset.emoji,
      count: Number(b.querySelector('.reaction-count').textContent), pressed: b.getAttribute('aria-pressed') === 'true',
      label: b.getAttribute('aria-label')}))}))"""


def rows(driver):
    return driver.execute_script(ROWS)


def row_of(driver, text):
    return next((r for r in rows(driver) if r["text"] == text), None)


def row_element(driver, seq):
    return driver.find_element(By.CSS_SELECTOR, f'#message-list li.message[data-seq="{seq}"]')


def headers(session):
    return {"Authorization": "Bearer " + session["token"]}


def send(server, session, text, conversation=None, recipient=None, reply_to=None):
    body = {"clientId": str(uuid.uuid4()), "text": text}
    body["conversationId" if conversation else "recipientId"] = conversation or recipient
    if reply_to:
        body["replyToSeq"] = reply_to
    response = requests.post(server.url + "/v1/messages", json=body, headers=headers(session), timeout=10)
    assert response.ok, response.text
    return response.json()["message"]


def act(server, session, conversation, seq, kind, **fields):
    response = requests.post(f"{server.url}/v1/conversations/{conversation}/messages/{seq}/actions",
                             json={"clientId": str(uuid.uuid4()), "kind": kind, **fields}, headers=headers(session), timeout=10)
    assert response.ok, response.text
    return response.json()["message"]


def history(server, session, conversation):
    return {m["seq"]: m for m in server.history(session, conversation)}


def two_people(server):
    return server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")


def open_chat(browsers, server, session, conversation, script=None, **options):
    driver = browsers(**options)
    if script:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})
    sign_in(driver, server, session)
    driver.get(server.url + "/#/c/" + conversation)
    wait(driver, lambda d: d.execute_script("return !document.getElementById('chat').hidden && !!document.querySelector('#message-list li')"))
    return driver


def menu_open(driver):
    return driver.execute_script("return !document.getElementById('message-menu').hidden")


def menu_items(driver):
    return driver.execute_script("""return [...document.querySelectorAll('#message-menu [role=menuitem]')].map(b =>
        ({name: b.getAttribute('aria-label') || b.textContent, disabled: b.getAttribute('aria-disabled') === 'true'}))""")


def open_menu(driver, seq):
    """Desktop: hover the bubble, then its "⋯" button."""
    bubble = row_element(driver, seq).find_element(By.CSS_SELECTOR, ".bubble")
    ActionChains(driver).move_to_element(bubble).perform()
    button = wait(driver, lambda d: next((b for b in row_element(d, seq).find_elements(By.CSS_SELECTOR, ".more-button") if b.is_displayed()), None))
    button.click()
    wait(driver, menu_open)


def choose(driver, name):
    item = wait(driver, lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, "#message-menu [role=menuitem]")
                                        if (b.get_attribute("aria-label") or b.text) == name), None))
    item.click()


def active(driver):
    return driver.execute_script("""const e = document.activeElement;
        return {tag: e.tagName, id: e.id, seq: e.dataset?.seq ?? null, role: e.getAttribute('role'), name: e.getAttribute('aria-label') || e.textContent}""")


def toast_text(driver):
    return driver.execute_script("const t = document.getElementById('toast'); return t.hidden ? '' : t.textContent")


def preview(driver, name):
    return driver.execute_script("""const li = [...document.querySelectorAll('#conversation-list li')]
        .find(li => li.querySelector('.row-name')?.textContent === arguments[0]);
        return li ? li.querySelector('.row-preview').textContent : null""", name)


def in_view(driver, seq):
    return driver.execute_script("""const li = document.querySelector(`#message-list li.message[data-seq="${arguments[0]}"]`);
        if (!li) return false;
        const box = li.getBoundingClientRect(), view = document.getElementById('messages').getBoundingClientRect();
        return box.top >= view.top - 1 && box.bottom <= view.bottom + 1""", seq)


# MARK: tests

def test_a_reply_quotes_its_original_and_the_quote_goes_to_it_loading_older_history(server, browsers):
    alice, bob = two_people(server)
    original = send(server, bob, "Where shall we meet?\nSecond line stays out of the quote", recipient=alice["user"]["id"])
    conversation = original["conversationId"]
    for index in range(70):  # the original is well before the first page (50) of history
        send(server, bob, f"filler {index}", conversation=conversation)
    old_reply = send(server, alice, "At the station", conversation=conversation, reply_to=original["seq"])
    assert old_reply["replyTo"]["seq"] == original["seq"]
    a = open_chat(browsers, server, alice, conversation)
    b = open_chat(browsers, server, bob, conversation)
    wait(a, lambda d: (r := row_of(d, "At the station")) and r["quote"] == {"name": "Bob Builder", "text": "Where shall we meet?"})
    assert row_of(a, "Where shall we meet?\nSecond line stays out of the quote") is None, "the original is not loaded yet"
    assert "replying to Bob Builder" in row_of(a, "At the station")["label"]

    # Choosing the quote loads older pages until the original is there, scrolls to it, focuses and highlights it.
    row_element(a, old_reply["seq"]).find_element(By.CSS_SELECTOR, ".quote").click()
    wait(a, lambda d: d.execute_script(
        "return !!document.querySelector(`#message-list li.message.flash[data-seq='${arguments[0]}']`)", original["seq"]))
    wait(a, lambda d: in_view(d, original["seq"]))
    assert active(a)["seq"] == str(original["seq"]), "the original has focus"
    wait(a, lambda d: not d.find_elements(By.CSS_SELECTOR, "#message-list li.flash"), timeout=5)  # the highlight is brief

    # Replying in the browser: hover, "⋯", Reply; the composer quotes it with a cancel button.
    newest = send(server, bob, "Also: bring the tickets", conversation=conversation)
    wait(a, lambda d: bubbles(d)[-1] == "Also: bring the tickets")
    a.execute_script("document.getElementById('messages').scrollTop = 1e9")
    wait(a, lambda d: in_view(d, newest["seq"]))
    open_menu(a, newest["seq"])
    choose(a, "Reply")
    wait(a, lambda d: by_id(d, "composer-context").is_displayed())
    assert by_id(a, "composer-context-title").text == "Replying to Bob Builder"
    assert by_id(a, "composer-context-text").text == "Also: bring the tickets"
    assert active(a)["id"] == "composer-input"
    # × cancels: the next message is not a reply. Then reply again, with Enter.
    by_id(a, "composer-context-cancel").click()
    wait(a, lambda d: not by_id(d, "composer-context").is_displayed())
    type_and_send(a, "Not a reply")
    wait(b, lambda d: (r := row_of(d, "Not a reply")) and r["quote"] is None)
    open_menu(a, newest["seq"])
    choose(a, "Reply")
    wait(a, lambda d: by_id(d, "composer-context").is_displayed())
    type_and_send(a, "Got them")
    wait(a, lambda d: not by_id(d, "composer-context").is_displayed())
    quote = {"name": "Bob Builder", "text": "Also: bring the tickets"}
    wait(a, lambda d: (r := row_of(d, "Got them")) and r["quote"] == quote and r["seq"])
    wait(b, lambda d: (r := row_of(d, "Got them")) and r["quote"] == {"name": "You", "text": "Also: bring the tickets"})
    stored = [m for m in server.history(alice, conversation) if m["text"] == "Got them"]
    assert len(stored) == 1 and stored[0]["replyTo"]["seq"] == newest["seq"], stored

    # The quote follows its original as it is now: edited, then deleted.
    act(server, bob, conversation, newest["seq"], "edit", text="Also: bring the passports")
    wait(a, lambda d: row_of(d, "Got them")["quote"] == {"name": "Bob Builder", "text": "Also: bring the passports"})
    act(server, bob, conversation, newest["seq"], "delete")
    wait(a, lambda d: row_of(d, "Got them")["quote"] == {"name": "Bob Builder", "text": "Deleted message"})
    wait(b, lambda d: row_of(d, "Got them")["quote"]["text"] == "Deleted message")


def test_the_replying_to_bar_follows_its_message_edited_then_deleted_while_i_write(server, browsers):
    """The bar above the composer quotes the message as it is now, as the sent reply's quote will:
    an edit changes its text, a delete for everyone makes it "Deleted message", live; the draft stays
    and the reply still goes."""
    alice, bob = two_people(server)
    original = send(server, alice, "Meet at the station", recipient=bob["user"]["id"])
    conversation = original["conversationId"]
    b = open_chat(browsers, server, bob, conversation)
    open_menu(b, original["seq"])
    choose(b, "Reply")
    wait(b, lambda d: by_id(d, "composer-context").is_displayed())
    assert by_id(b, "composer-context-text").text == "Meet at the station"
    by_id(b, "composer-input").send_keys("On my way")

    act(server, alice, conversation, original["seq"], "edit", text="Meet at the bridge\nnot at the station")
    wait(b, lambda d: by_id(d, "composer-context-text").text == "Meet at the bridge")
    act(server, alice, conversation, original["seq"], "delete")
    wait(b, lambda d: by_id(d, "composer-context-text").text == "Deleted message")
    assert by_id(b, "composer-context-title").text == "Replying to Alice Liddell"
    assert by_id(b, "composer-input").get_attribute("value") == "On my way", "the draft stays"
    assert active(b)["id"] == "composer-input", "the writer keeps the focus"

    by_id(b, "composer-input").send_keys(Keys.ENTER)
    wait(b, lambda d: not by_id(d, "composer-context").is_displayed())
    wait(b, lambda d: (r := row_of(d, "On my way")) and r["seq"] and r["quote"] == {"name": "Alice Liddell", "text": "Deleted message"})
    [stored] = [m for m in server.history(alice, conversation) if m["text"] == "On my way"]
    assert stored["replyTo"]["seq"] == original["seq"] and stored["replyTo"]["deleted"], stored


def test_a_reaction_from_the_menu_shows_everywhere_and_the_chip_toggles_it(server, browsers):
    alice, bob = two_people(server)
    message = send(server, bob, "We shipped it", recipient=alice["user"]["id"])
    conversation = message["conversationId"]
    a = open_chat(browsers, server, alice, conversation)
    b = open_chat(browsers, server, bob, conversation)
    wait(a, lambda d: bubbles(d) == ["We shipped it"])
    open_menu(a, message["seq"])
    names = [item["name"] for item in menu_items(a)]
    assert names[:7] == ["React with 👍", "React with ❤️", "React with 😂", "React with 😮", "React with 😢", "React with 🙏", "More reactions…"]
    assert names[7:] == ["Reply", "Copy", "Delete…"], "no Edit on someone else's message"
    choose(a, "React with 👍")
    assert not menu_open(a)
    wait(a, lambda d: row_of(d, "We shipped it")["reactions"] == [{"emoji": "👍", "count": 1, "pressed": True, "label": "👍 1, including you"}])
    wait(b, lambda d: row_of(d, "We shipped it")["reactions"] == [{"emoji": "👍", "count": 1, "pressed": False, "label": "👍 1"}])

    # Bob taps the chip: his joins; the chip says so on both sides.
    b.find_element(By.CSS_SELECTOR, f'li[data-seq="{message["seq"]}"] .reaction').click()
    wait(b, lambda d: row_of(d, "We shipped it")["reactions"] == [{"emoji": "👍", "count": 2, "pressed": True, "label": "👍 2, including you"}])
    wait(a, lambda d: row_of(d, "We shipped it")["reactions"] == [{"emoji": "👍", "count": 2, "pressed": True, "label": "👍 2, including you"}])
    # Alice taps it again: hers is taken back.
    a.find_element(By.CSS_SELECTOR, f'li[data-seq="{message["seq"]}"] .reaction').click()
    wait(a, lambda d: row_of(d, "We shipped it")["reactions"] == [{"emoji": "👍", "count": 1, "pressed": False, "label": "👍 1"}])
    wait(b, lambda d: row_of(d, "We shipped it")["reactions"] == [{"emoji": "👍", "count": 1, "pressed": True, "label": "👍 1, including you"}])
    stored = history(server, bob, conversation)[message["seq"]]
    assert stored["reactions"] == [{"emoji": "👍", "count": 1, "mine": True, "userIds": [bob["user"]["id"]]}], stored

    # The fuller picker: filter, pick; it replaces Bob's 👍 (one reaction per person).
    open_menu(b, message["seq"])
    assert [i for i in menu_items(b) if i["name"] == "Remove reaction 👍"], "my current reaction is marked in the menu"
    choose(b, "More reactions…")
    wait(b, lambda d: d.execute_script("return document.getElementById('emoji-dialog').open"))
    assert active(b)["id"] == "emoji-filter"
    assert len(b.find_elements(By.CSS_SELECTOR, "#emoji-grid button")) >= 40
    by_id(b, "emoji-filter").send_keys("rocket")
    wait(b, lambda d: [e.get_attribute("aria-label") for e in d.find_elements(By.CSS_SELECTOR, "#emoji-grid button") if e.is_displayed()] == ["rocket"])
    by_id(b, "emoji-filter").send_keys(Keys.ENTER)
    wait(b, lambda d: not d.execute_script("return document.getElementById('emoji-dialog').open"))
    wait(a, lambda d: row_of(d, "We shipped it")["reactions"] == [{"emoji": "🚀", "count": 1, "pressed": False, "label": "🚀 1"}])
    wait(b, lambda d: row_of(d, "We shipped it")["reactions"] == [{"emoji": "🚀", "count": 1, "pressed": True, "label": "🚀 1, including you"}])
    # Copy puts the text on the clipboard.
    b.execute_cdp_cmd("Browser.grantPermissions", {"origin": server.url, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    open_menu(b, message["seq"])
    choose(b, "Copy")
    wait(b, lambda d: toast_text(d) == "Copied")
    assert b.execute_script("return navigator.clipboard.readText()") == "We shipped it"


def test_an_edit_shows_live_with_edited_and_escape_or_up_arrow_work_in_the_composer(server, browsers):
    alice, bob = two_people(server)
    first = send(server, alice, "Meet at 9", recipient=bob["user"]["id"])
    conversation = first["conversationId"]
    second = send(server, alice, "Bring snacks", conversation=conversation)
    a = open_chat(browsers, server, alice, conversation)
    b = open_chat(browsers, server, bob, conversation)
    wait(b, lambda d: bubbles(d) == ["Meet at 9", "Bring snacks"])
    by_id(a, "composer-input").send_keys("a draft")

    open_menu(a, first["seq"])
    assert "Edit" in [item["name"] for item in menu_items(a)]
    choose(a, "Edit")
    wait(a, lambda d: by_id(d, "composer-context").is_displayed() and by_id(d, "composer-input").get_attribute("value") == "Meet at 9")
    assert by_id(a, "composer-context-title").text == "Editing"
    assert by_id(a, "send").get_attribute("aria-label") == "Save edit"
    # Escape cancels: the draft comes back and nothing was sent.
    by_id(a, "composer-input").send_keys(Keys.ESCAPE)
    wait(a, lambda d: not by_id(d, "composer-context").is_displayed() and by_id(d, "composer-input").get_attribute("value") == "a draft")
    assert by_id(a, "send").get_attribute("aria-label") == "Send"

    open_menu(a, first["seq"])
    choose(a, "Edit")
    box = wait(a, lambda d: by_id(d, "composer-input").get_attribute("value") == "Meet at 9" and by_id(d, "composer-input"))
    box.send_keys(Keys.BACKSPACE, "10" + Keys.ENTER)
    wait(a, lambda d: by_id(d, "composer-input").get_attribute("value") == "a draft" and not by_id(d, "composer-context").is_displayed())
    wait(a, lambda d: (r := row_of(d, "Meet at 10")) and r["edited"] and r["seq"] == first["seq"])
    wait(b, lambda d: (r := row_of(d, "Meet at 10")) and r["edited"] and ", edited" in r["label"])
    assert bubbles(b) == ["Meet at 10", "Bring snacks"], "the message keeps its place"
    assert history(server, bob, conversation)[first["seq"]]["text"] == "Meet at 10"

    # Up arrow in an empty composer edits my last message; an edit of the last one is the list's preview.
    box.clear()
    box.send_keys(Keys.ARROW_UP)
    wait(a, lambda d: by_id(d, "composer-input").get_attribute("value") == "Bring snacks" and by_id(d, "composer-context").is_displayed())
    box.send_keys(" and drinks" + Keys.ENTER)
    wait(b, lambda d: (r := row_of(d, "Bring snacks and drinks")) and r["edited"])
    wait(b, lambda d: preview(d, "Alice Liddell") == "Bring snacks and drinks")
    wait(a, lambda d: preview(d, "Bob Builder") == "You: Bring snacks and drinks")
    versions = requests.get(f"{server.url}/v1/conversations/{conversation}/messages/{second['seq']}/versions", headers=headers(bob), timeout=10)
    assert [v["text"] for v in versions.json()["versions"]] == ["Bring snacks"], versions.text


def test_delete_for_everyone_leaves_a_tombstone_live_and_its_replies_say_so(server, browsers):
    alice, bob = two_people(server)
    doomed = send(server, alice, "Oops, wrong chat", recipient=bob["user"]["id"])
    conversation = doomed["conversationId"]
    send(server, bob, "What was that?", conversation=conversation, reply_to=doomed["seq"])
    last = send(server, alice, "Never mind", conversation=conversation)
    a = open_chat(browsers, server, alice, conversation)
    b = open_chat(browsers, server, bob, conversation)
    wait(b, lambda d: len(bubbles(d)) == 3)

    open_menu(a, doomed["seq"])
    choose(a, "Delete…")
    wait(a, lambda d: d.execute_script("return document.getElementById('delete-dialog').open"))
    assert active(a)["id"] == "delete-cancel", "the safe choice has focus"
    assert by_id(a, "delete-for-everyone").is_displayed() and by_id(a, "delete-for-me").is_displayed()
    by_id(a, "delete-cancel").click()
    wait(a, lambda d: not d.execute_script("return document.getElementById('delete-dialog').open"))
    assert row_of(a, "Oops, wrong chat") is not None, "cancel deletes nothing"

    open_menu(a, doomed["seq"])
    choose(a, "Delete…")
    wait(a, lambda d: by_id(d, "delete-for-everyone").is_displayed())
    by_id(a, "delete-for-everyone").click()
    for driver in (a, b):
        wait(driver, lambda d: (r := rows(d)[0]) and r["deleted"] and r["text"] == "This message was deleted" and r["seq"] == doomed["seq"])
        wait(driver, lambda d: row_of(d, "What was that?")["quote"]["text"] == "Deleted message")
    assert history(server, bob, conversation)[doomed["seq"]]["text"] == ""
    # A tombstone's menu has only "Delete for me".
    open_menu(b, doomed["seq"])
    assert menu_items(b) == [{"name": "Delete for me", "disabled": False}]
    b.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(b, lambda d: not menu_open(d))

    # Deleting the last message: the list's preview says so.
    open_menu(a, last["seq"])
    choose(a, "Delete…")
    wait(a, lambda d: by_id(d, "delete-for-everyone").is_displayed())
    by_id(a, "delete-for-everyone").click()
    wait(b, lambda d: preview(d, "Alice Liddell") == "This message was deleted")
    wait(a, lambda d: preview(d, "Bob Builder") == "You: This message was deleted")


def test_a_chat_not_opened_yet_counts_no_deleted_or_hidden_message_as_unread(server, browsers):
    """The list's badge is the server's count, kept moving: a chat whose messages this page has not
    loaded must not count what was deleted for everyone, or hidden by me on another device."""
    alice, bob = two_people(server)
    sent = [send(server, alice, f"note {n}", recipient=bob["user"]["id"]) for n in range(1, 4)]
    conversation = sent[0]["conversationId"]
    act(server, alice, conversation, sent[0]["seq"], "delete")
    act(server, bob, conversation, sent[1]["seq"], "hide")
    unread = lambda: next(c["unreadCount"] for c in server.conversations(bob) if c["id"] == conversation)
    assert unread() == 1
    b = browsers()
    sign_in(b, server, bob)
    badge = lambda d: next((r["badge"] for r in list_rows(d) if r["name"] == "Alice Liddell"), "missing")
    wait(b, lambda d: badge(d) == "1")
    # Live: a new message counts, its delete for everyone takes it back.
    announced = lambda d: d.execute_script("return document.getElementById('announcer').textContent")
    late = send(server, alice, "note 4", conversation=conversation)
    wait(b, lambda d: badge(d) == "2" and "note 4" in announced(d))
    act(server, alice, conversation, late["seq"], "delete")
    wait(b, lambda d: badge(d) == "1")
    assert unread() == 1
    assert "note 4" not in announced(b), "a message deleted for everyone leaves the screen reader's region too"
    # And one edited: the words it no longer says leave it.
    typo = send(server, alice, "meet at the libary", conversation=conversation)
    wait(b, lambda d: "libary" in announced(d))
    act(server, alice, conversation, typo["seq"], "edit", text="meet at the library")
    wait(b, lambda d: "libary" not in announced(d))


def test_delete_for_me_hides_it_on_all_my_devices_and_nobody_elses(server, browsers):
    alice, bob = two_people(server)
    first = send(server, bob, "Keep this", recipient=alice["user"]["id"])
    conversation = first["conversationId"]
    spam = send(server, bob, "Buy cheap watches", conversation=conversation)
    a1 = open_chat(browsers, server, alice, conversation)
    a2 = open_chat(browsers, server, alice, conversation)  # Alice's second device
    b = open_chat(browsers, server, bob, conversation)
    for driver in (a1, a2, b):
        wait(driver, lambda d: bubbles(d) == ["Keep this", "Buy cheap watches"])
    wait(a2, lambda d: preview(d, "Bob Builder") == "Buy cheap watches")

    open_menu(a1, spam["seq"])
    choose(a1, "Delete…")
    wait(a1, lambda d: by_id(d, "delete-for-me").is_displayed())
    assert not by_id(a1, "delete-for-everyone").is_displayed(), "someone else's message in a direct chat: for me only"
    by_id(a1, "delete-for-me").click()
    wait(a1, lambda d: bubbles(d) == ["Keep this"])
    wait(a2, lambda d: bubbles(d) == ["Keep this"])
    wait(a2, lambda d: preview(d, "Bob Builder") == "Keep this")
    # Bob still has it: a message he sends after it arrives, and his list is unchanged.
    send(server, bob, "Sorry, my account was hacked", conversation=conversation)
    wait(a2, lambda d: bubbles(d) == ["Keep this", "Sorry, my account was hacked"])
    wait(b, lambda d: bubbles(d) == ["Keep this", "Buy cheap watches", "Sorry, my account was hacked"])
    a1.refresh()
    wait(a1, lambda d: bubbles(d) == ["Keep this", "Sorry, my account was hacked"])
    assert spam["seq"] not in history(server, alice, conversation)
    assert spam["seq"] in history(server, bob, conversation)


def test_an_edit_and_a_delete_made_while_the_other_was_offline_show_after_resume(server, browsers):
    alice, bob = two_people(server)
    edited = send(server, alice, "Dinner at 7", recipient=bob["user"]["id"])
    conversation = edited["conversationId"]
    deleted = send(server, alice, "Bring the secret recipe", conversation=conversation)
    reacted = send(server, bob, "Sounds good", conversation=conversation)
    a = open_chat(browsers, server, alice, conversation)
    b = open_chat(browsers, server, bob, conversation, script=SOCKET_SWITCH)
    b2 = open_chat(browsers, server, bob, conversation)  # Bob's other device: closed, then opened again
    wait(b, lambda d: bubbles(d) == ["Dinner at 7", "Bring the secret recipe", "Sounds good"])
    wait(b2, lambda d: bubbles(d) == ["Dinner at 7", "Bring the secret recipe", "Sounds good"])
    wait(a, lambda d: websocket_count(server.url) == 3)

    b.execute_script("window.__goOffline()")
    b2.get("about:blank")
    wait(a, lambda d: websocket_count(server.url) == 1)  # only Alice's page is connected

    open_menu(a, edited["seq"])
    choose(a, "Edit")
    box = wait(a, lambda d: by_id(d, "composer-input").get_attribute("value") == "Dinner at 7" and by_id(d, "composer-input"))
    box.send_keys(Keys.BACKSPACE, "8" + Keys.ENTER)
    open_menu(a, deleted["seq"])
    choose(a, "Delete…")
    wait(a, lambda d: by_id(d, "delete-for-everyone").is_displayed())
    by_id(a, "delete-for-everyone").click()
    open_menu(a, reacted["seq"])
    choose(a, "React with 😂")
    stored = lambda: history(server, alice, conversation)
    wait(a, lambda d: stored()[edited["seq"]]["text"] == "Dinner at 8" and stored()[deleted["seq"]].get("deletedAt")
         and stored()[reacted["seq"]].get("reactions"))

    # Bob's page, offline all along, still shows what it had.
    assert [r["text"] for r in rows(b)] == ["Dinner at 7", "Bring the secret recipe", "Sounds good"]
    b.execute_script("return window.__goOnline()")
    wait(b, lambda d: [r["text"] for r in rows(d)] == ["Dinner at 8", "This message was deleted", "Sounds good"])
    state = rows(b)
    assert state[0]["edited"] and state[1]["deleted"] and state[2]["reactions"] == [{"emoji": "😂", "count": 1, "pressed": False, "label": "😂 1"}]
    hellos = b.execute_script("return window.__hellos")
    assert len(hellos) >= 2 and isinstance(hellos[-1].get("after"), int), "it resumed from its position, not a fresh start"
    # The page that was closed: opened again, it shows the same.
    b2.back()
    wait(b2, lambda d: [r["text"] for r in rows(d)] == ["Dinner at 8", "This message was deleted", "Sounds good"])


def test_actions_made_offline_wait_in_the_outbox_survive_a_reload_and_are_sent_once(server, browsers):
    alice, bob = two_people(server)
    sent = send(server, alice, "Tea or coffee?", recipient=bob["user"]["id"])
    conversation = sent["conversationId"]
    theirs = send(server, bob, "Coffee please", conversation=conversation)
    a = open_chat(browsers, server, alice, conversation, script=SOCKET_SWITCH)
    b = open_chat(browsers, server, bob, conversation)
    wait(a, lambda d: bubbles(d) == ["Tea or coffee?", "Coffee please"] and websocket_count(server.url) == 2)
    a.execute_script("window.__goOffline()")
    wait(a, lambda d: websocket_count(server.url) == 1 and by_id(d, "offline-banner").is_displayed())

    # Offline: two new messages, then edit the first (the pending text changes) and delete the second
    # (it is cancelled); edit a sent message and react to Bob's. All shows at once.
    type_and_send(a, "Milk?")
    type_and_send(a, "Sugar?")
    wait(a, lambda d: bubbles(d)[-2:] == ["Milk?", "Sugar?"])
    pending = [r for r in rows(a) if r["seq"] is None]
    assert len(pending) == 2
    for text, command in (("Milk?", "Edit"), ("Sugar?", "Delete…")):
        li = a.execute_script("""return [...document.querySelectorAll('#message-list li.message')].find(li =>
            li.querySelector('.text').textContent === arguments[0])""", text)
        ActionChains(a).move_to_element(li.find_element(By.CSS_SELECTOR, ".bubble")).perform()
        wait(a, lambda d: li.find_element(By.CSS_SELECTOR, ".more-button").is_displayed())
        li.find_element(By.CSS_SELECTOR, ".more-button").click()
        wait(a, menu_open)
        items = {item["name"]: item["disabled"] for item in menu_items(a)}
        assert items["React with 👍"] and items["Reply"], "a message without a seq takes no reaction or reply yet"
        choose(a, command)
        if command == "Edit":
            box = wait(a, lambda d: by_id(d, "composer-input").get_attribute("value") == "Milk?" and by_id(d, "composer-input"))
            box.send_keys(Keys.BACKSPACE, " and honey?" + Keys.ENTER)
        else:
            wait(a, lambda d: by_id(d, "delete-for-everyone").is_displayed())
            assert not by_id(a, "delete-for-me").is_displayed()
            by_id(a, "delete-for-everyone").click()
    open_menu(a, sent["seq"])
    choose(a, "Edit")
    box = wait(a, lambda d: by_id(d, "composer-input").get_attribute("value") == "Tea or coffee?" and by_id(d, "composer-input"))
    box.send_keys(Keys.BACKSPACE, ", or juice?" + Keys.ENTER)
    open_menu(a, theirs["seq"])
    choose(a, "React with ❤️")
    wait(a, lambda d: [r["text"] for r in rows(d)] == ["Tea or coffee, or juice?", "Coffee please", "Milk and honey?"])
    wait(a, lambda d: (r := rows(d)) and r[0]["edited"] and any(c["pressed"] for c in r[1]["reactions"]))
    outbox = json.loads(a.execute_script("return localStorage.getItem('parley.outbox.' + arguments[0])", alice["user"]["id"]))
    assert [(e.get("action"), e.get("text")) for e in outbox] == [(None, "Milk and honey?"), ("edit", "Tea or coffee, or juice?"), ("react", None)]

    # A reload while still offline: the outbox is kept, and shown.
    a.refresh()
    wait(a, lambda d: [r["text"] for r in rows(d)] == ["Tea or coffee, or juice?", "Coffee please", "Milk and honey?"])
    assert websocket_count(server.url) == 1
    assert [r["text"] for r in rows(b)] == ["Tea or coffee?", "Coffee please"], "nothing reached Bob yet"

    a.execute_script("return window.__goOnline()")
    wait(b, lambda d: [r["text"] for r in rows(d)] == ["Tea or coffee, or juice?", "Coffee please", "Milk and honey?"])
    wait(b, lambda d: row_of(d, "Coffee please")["reactions"] == [{"emoji": "❤️", "count": 1, "pressed": False, "label": "❤️ 1"}])
    wait(a, lambda d: json.loads(d.execute_script("return localStorage.getItem('parley.outbox.' + arguments[0])", alice["user"]["id"])) == [])
    stored = server.history(bob, conversation)
    assert [m["text"] for m in stored] == ["Tea or coffee, or juice?", "Coffee please", "Milk and honey?"], "sent once, the cancelled one never"
    versions = requests.get(f"{server.url}/v1/conversations/{conversation}/messages/{sent['seq']}/versions", headers=headers(bob), timeout=10)
    assert len(versions.json()["versions"]) == 1, "the edit applied once"


def test_a_refused_action_tells_why(server, browsers):
    alice, bob = two_people(server)
    message = send(server, bob, "Short-lived", recipient=alice["user"]["id"])
    conversation = message["conversationId"]
    a = open_chat(browsers, server, alice, conversation, script=SOCKET_SWITCH)
    wait(a, lambda d: bubbles(d) == ["Short-lived"] and websocket_count(server.url) == 1)
    a.execute_script("window.__goOffline()")
    wait(a, lambda d: websocket_count(server.url) == 0)
    open_menu(a, message["seq"])
    choose(a, "React with 👍")
    # Empty until the chip is drawn: the condition says "not yet" rather than raising.
    wait(a, lambda d: any(r["pressed"] for r in row_of(d, "Short-lived")["reactions"]))
    act(server, bob, conversation, message["seq"], "delete")  # deleted before the reaction reaches the server
    a.execute_script("return window.__goOnline()")
    wait(a, lambda d: toast_text(d) != "")
    # Which action, on which message, in which chat, then the server's reason.
    told = toast_text(a)
    assert told.startswith("Not done: your 👍 on “") and "” in \u2068Bob Builder\u2069. " in told and "deleted" in told.split(". ", 1)[1].lower(), told
    wait(a, lambda d: (r := rows(d)[0]) and r["deleted"] and r["reactions"] == [])
    wait(a, lambda d: json.loads(d.execute_script("return localStorage.getItem('parley.outbox.' + arguments[0])", alice["user"]["id"])) == [])


def test_keyboard_only_open_the_menu_move_react_and_escape(server, browsers):
    alice, bob = two_people(server)
    message = send(server, bob, "Ready for review", recipient=alice["user"]["id"])
    conversation = message["conversationId"]
    mine = send(server, alice, "Looking now", conversation=conversation)
    a = open_chat(browsers, server, alice, conversation)
    wait(a, lambda d: bubbles(d) == ["Ready for review", "Looking now"] and active(d)["id"] == "composer-input")
    # From the composer, Shift+Tab reaches the message list (one tab stop); an arrow goes into it, at
    # the newest message in view, and arrows move between messages.
    a.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
    assert active(a)["id"] == "messages", active(a)
    a.switch_to.active_element.send_keys(Keys.ARROW_UP)
    wait(a, lambda d: active(d)["seq"] == str(mine["seq"]))
    a.switch_to.active_element.send_keys(Keys.ARROW_UP)
    wait(a, lambda d: active(d)["seq"] == str(message["seq"]))
    a.switch_to.active_element.send_keys(Keys.ENTER)
    wait(a, menu_open)
    assert active(a)["name"] == "React with 👍", active(a)
    a.switch_to.active_element.send_keys(Keys.ARROW_RIGHT)
    wait(a, lambda d: active(d)["name"] == "React with ❤️")
    a.switch_to.active_element.send_keys(Keys.ENTER)
    wait(a, lambda d: not menu_open(d))
    assert active(a)["seq"] == str(message["seq"]), "focus goes back to the message"
    wait(a, lambda d: row_of(d, "Ready for review")["reactions"] == [{"emoji": "❤️", "count": 1, "pressed": True, "label": "❤️ 1, including you"}])
    # Shift+F10 opens it too; arrows wrap; Escape closes it and gives focus back.
    a.switch_to.active_element.send_keys(Keys.SHIFT, Keys.F10)
    wait(a, menu_open)
    assert active(a)["role"] == "menuitem"
    a.switch_to.active_element.send_keys(Keys.ARROW_UP)
    wait(a, lambda d: active(d)["name"] == "Delete…")
    a.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(a, lambda d: not menu_open(d) and active(d)["seq"] == str(message["seq"]))
    # The chip is reachable with Tab and toggles with Enter.
    a.switch_to.active_element.send_keys(Keys.TAB)
    wait(a, lambda d: active(d)["name"] == "❤️ 1, including you")
    a.switch_to.active_element.send_keys(Keys.ENTER)
    wait(a, lambda d: row_of(d, "Ready for review")["reactions"] == [])
    wait(a, lambda d: not history(server, bob, conversation)[message["seq"]].get("reactions"))


def touch_long_press(driver, element, seconds=0.8):
    finger = PointerInput(interaction.POINTER_TOUCH, "finger")
    actions = ActionBuilder(driver, mouse=finger)
    actions.pointer_action.move_to(element).pointer_down().pause(seconds).pointer_up()
    actions.perform()


def test_at_phone_width_a_long_press_opens_the_menu_inside_the_screen(server, browsers):
    alice, bob = two_people(server)
    message = send(server, bob, "A long message from Bob that wraps on a phone screen, to press on", recipient=alice["user"]["id"])
    conversation = message["conversationId"]
    a = browsers(width=390, height=800)
    a.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 800, "deviceScaleFactor": 1, "mobile": True})
    a.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    sign_in(a, server, alice)
    a.get(server.url + "/#/c/" + conversation)
    wait(a, lambda d: len(bubbles(d)) == 1 and by_id(d, "chat-pane").is_displayed())
    assert a.execute_script("return window.innerWidth") == 390
    bubble = row_element(a, message["seq"]).find_element(By.CSS_SELECTOR, ".bubble")
    touch_long_press(a, bubble)
    wait(a, menu_open)
    box = a.execute_script("const r = document.getElementById('message-menu').getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]")
    assert box[0] >= 0 and box[1] <= 390 and box[2] >= 0 and box[3] <= 800, box
    choose(a, "Reply")
    wait(a, lambda d: by_id(d, "composer-context").is_displayed())
    type_and_send(a, "On it")
    wait(a, lambda d: (r := row_of(d, "On it")) and r["quote"] and r["quote"]["name"] == "Bob Builder" and r["seq"])
    assert a.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scroll"


def test_dark_mode_and_axe_on_a_chat_with_a_quote_reactions_an_edit_and_a_tombstone(server, browsers, tmp_path):
    alice, bob = two_people(server)
    question = send(server, bob, "Can you review my pull request today?", recipient=alice["user"]["id"])
    conversation = question["conversationId"]
    answer = send(server, alice, "Yes, after lunch", conversation=conversation, reply_to=question["seq"])
    act(server, bob, conversation, answer["seq"], "react", emoji="👍")
    act(server, alice, conversation, answer["seq"], "react", emoji="🎉")
    typo = send(server, bob, "Thansk!", conversation=conversation)
    act(server, bob, conversation, typo["seq"], "edit", text="Thanks!")
    gone = send(server, bob, "Wrong chat, sorry", conversation=conversation)
    act(server, bob, conversation, gone["seq"], "delete")
    problems = []

    def check(driver, name):
        problems.extend(page_problems(driver, name, tmp_path))

    chip_backgrounds = {}
    for dark in (False, True):
        for width, height in ((1100, 760), (390, 780)):
            label = f"{'dark' if dark else 'light'} {width}"
            d = browsers(dark=dark, width=width, height=height)
            d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 700})
            if width < 700:
                d.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
            sign_in(d, server, alice)
            d.get(server.url + "/#/c/" + conversation)
            wait(d, lambda d: (r := rows(d)) and len(r) == 4 and r[1]["quote"] and len(r[1]["reactions"]) == 2 and r[2]["edited"] and r[3]["deleted"])
            wait(d, lambda d: rows(d)[1]["quote"] == {"name": "Bob Builder", "text": "Can you review my pull request today?"})
            chip_backgrounds[label] = d.execute_script("return getComputedStyle(document.querySelector('.reaction')).backgroundColor")
            dark_scheme = d.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches")
            assert dark_scheme == dark
            check(d, f"{label} chat")
            open_menu(d, answer["seq"]) if width > 700 else touch_long_press(d, row_element(d, answer["seq"]).find_element(By.CSS_SELECTOR, ".bubble"))
            wait(d, menu_open)
            check(d, f"{label} menu")
            choose(d, "More reactions…")
            wait(d, lambda d: d.execute_script("return document.getElementById('emoji-dialog').open"))
            check(d, f"{label} emoji picker")
            by_id(d, "emoji-close").click()
            open_menu(d, answer["seq"]) if width > 700 else touch_long_press(d, row_element(d, answer["seq"]).find_element(By.CSS_SELECTOR, ".bubble"))
            choose(d, "Delete…")
            wait(d, lambda d: d.execute_script("return document.getElementById('delete-dialog').open"))
            check(d, f"{label} delete dialog")
            by_id(d, "delete-cancel").click()
            open_menu(d, answer["seq"]) if width > 700 else touch_long_press(d, row_element(d, answer["seq"]).find_element(By.CSS_SELECTOR, ".bubble"))
            choose(d, "Reply")
            wait(d, lambda d: by_id(d, "composer-context").is_displayed())
            check(d, f"{label} replying")
    # Dark mode uses the dark palette (a chip is on the dark panel colour, not white).
    assert chip_backgrounds["light 1100"] != chip_backgrounds["dark 1100"], chip_backgrounds
    assert not problems, "\n".join(problems)


def test_in_a_group_the_owner_deletes_anyones_message_members_only_their_own_and_chips_name_who(server, browsers):
    from test_web_groups import crew, open_app, open_group
    ada, grace, alan, conversation = crew(server, "Crew")
    question = send(server, ada, "Lunch at noon?", conversation=conversation)
    spam = send(server, grace, "Click this link", conversation=conversation)
    g, l = open_app(browsers, server, grace), open_app(browsers, server, alan)
    a = open_app(browsers, server, ada)
    for driver in (a, g, l):
        open_group(driver, server, conversation)
        wait(driver, lambda d: [r["text"] for r in rows(d)] == ["Lunch at noon?", "Click this link"])

    # Two reactions: the chip counts both and names who (its tooltip).
    for driver in (g, l):
        open_menu(driver, question["seq"])
        choose(driver, "React with 👍")
    wait(a, lambda d: row_of(d, "Lunch at noon?")["reactions"] == [{"emoji": "👍", "count": 2, "pressed": False, "label": "👍 2"}])
    names = a.find_element(By.CSS_SELECTOR, f'li[data-seq="{question["seq"]}"] .reaction').get_attribute("title")
    assert names in ("Grace Hopper and Alan Turing", "Alan Turing and Grace Hopper"), names

    # A member may delete only their own message for everyone; the owner anyone's.
    open_menu(l, question["seq"])
    choose(l, "Delete…")
    wait(l, lambda d: by_id(d, "delete-for-me").is_displayed())
    assert not by_id(l, "delete-for-everyone").is_displayed()
    by_id(l, "delete-cancel").click()
    open_menu(a, spam["seq"])
    choose(a, "Delete…")
    wait(a, lambda d: by_id(d, "delete-for-everyone").is_displayed())
    by_id(a, "delete-for-everyone").click()
    for driver in (a, g, l):
        wait(driver, lambda d: (r := row_of(d, "This message was deleted")) and r["seq"] == spam["seq"] and r["deleted"])
    # A reply in the group quotes its original's sender by name.
    open_menu(l, question["seq"])
    choose(l, "Reply")
    wait(l, lambda d: by_id(d, "composer-context-title").text == "Replying to Ada Lovelace")
    type_and_send(l, "Count me in")
    wait(g, lambda d: (r := row_of(d, "Count me in")) and r["quote"] == {"name": "Ada Lovelace", "text": "Lunch at noon?"})
    wait(a, lambda d: (r := row_of(d, "Count me in")) and r["quote"] == {"name": "You", "text": "Lunch at noon?"})


def test_an_outbox_entry_only_the_indexeddb_copy_kept_goes_out_after_a_restart(server, browsers):
    """store.js outbox rule 6: a browser crash can lose localStorage's last minute, not IndexedDB's
    copy. What only the copy holds is put back at start, in the order written, and sent once."""
    alice, bob = two_people(server)
    first = send(server, alice, "hello", recipient=bob["user"]["id"])
    conversation = first["conversationId"]
    a = open_chat(browsers, server, alice, conversation)
    lost = {"clientId": str(uuid.uuid4()), "conversationId": conversation, "recipientId": None, "text": "written before the crash",
            "createdAt": 1, "status": "sending", "error": None}
    kept = a.execute_async_script("""const [me, entry, done] = arguments;
        import('/js/outbox-copy.js').then(async (copy) => {
          copy.saveOutboxCopy(me, JSON.stringify([entry]));
          for (let i = 0; i < 50; i++) {
            const now = await copy.readOutboxCopy(me);
            if (now.length === 1) return done(now);
            await new Promise((r) => setTimeout(r, 20));
          }
          done(null);
        });""", alice["user"]["id"], lost)
    assert kept and kept[0]["clientId"] == lost["clientId"]
    a.refresh()
    wait(a, lambda d: [m["text"] for m in server.history(bob, conversation)] == ["hello", "written before the crash"])
    wait(a, lambda d: d.execute_script("return localStorage.getItem('parley.outbox.' + arguments[0])", alice["user"]["id"]) == "[]")
    [message] = [m for m in server.history(bob, conversation) if m["text"] == "written before the crash"]
    assert message["clientId"] == lost["clientId"]
