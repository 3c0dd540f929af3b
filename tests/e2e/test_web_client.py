"""The web client end to end: two real browsers against a real server on loopback."""
import json

import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import sign_in


def wait(driver, condition, timeout=15):
    return WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))


def by_id(driver, element_id):
    return driver.find_element(By.ID, element_id)


def bubbles(driver):
    return driver.execute_script("return [...document.querySelectorAll('#message-list .bubble .text')].map(b => b.textContent)")


def statuses(driver):
    return driver.execute_script("return [...document.querySelectorAll('#message-list .status')].map(s => s.classList[1])")


def list_rows(driver):
    return driver.execute_script("""return [...document.querySelectorAll('#conversation-list li')].map(li => ({
        name: li.querySelector('.row-name')?.textContent, preview: li.querySelector('.row-preview')?.textContent,
        badge: li.querySelector('.badge')?.textContent ?? null, online: !!li.querySelector('.dot')}))""")


def type_and_send(driver, text):
    box = by_id(driver, "composer-input")
    box.send_keys(text)
    box.send_keys(Keys.ENTER)


def open_chat_by_search(driver, query, display_name):
    by_id(driver, "new-chat").click()
    by_id(driver, "search-input").send_keys(query)
    result = wait(driver, lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, "#search-results button")
                                           if display_name in b.text), None))
    result.click()
    wait(driver, lambda d: by_id(d, "chat-name").text == display_name)


def test_register_login_logout_and_the_session_survives_a_reload(server, browsers):
    driver = browsers()
    driver.get(server.url)
    by_id(driver, "auth-switch").click()
    by_id(driver, "auth-username").send_keys("alice")
    by_id(driver, "auth-display-name").send_keys("Alice Liddell")
    by_id(driver, "auth-password").send_keys("wonderland")
    by_id(driver, "auth-submit").click()
    wait(driver, lambda d: by_id(d, "list-empty").is_displayed())
    assert by_id(driver, "list-empty").text.startswith("No conversations yet")
    assert by_id(driver, "empty-start-chat").is_displayed(), "the empty state offers an action"
    driver.refresh()
    wait(driver, lambda d: by_id(d, "app-view").is_displayed() and by_id(d, "list-empty").is_displayed())
    by_id(driver, "menu-button").click()  # "Log out" lives in the account menu
    by_id(driver, "logout").click()
    wait(driver, lambda d: by_id(d, "auth-view").is_displayed())
    assert driver.execute_script("return localStorage.getItem('parley.session')") is None
    by_id(driver, "auth-username").send_keys("alice")
    by_id(driver, "auth-password").send_keys("wrong password")
    by_id(driver, "auth-submit").click()
    wait(driver, lambda d: by_id(d, "auth-error").is_displayed())
    assert "Wrong username or password" in by_id(driver, "auth-error").text
    by_id(driver, "auth-password").clear()
    by_id(driver, "auth-password").send_keys("wonderland", Keys.ENTER)  # signed in from the keyboard
    wait(driver, lambda d: by_id(d, "app-view").is_displayed())
    # Focus lands on the app's heading, not the page, and the next Tab is the first control.
    wait(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "app-heading")
    driver.switch_to.active_element.send_keys(Keys.TAB)
    assert driver.switch_to.active_element.get_attribute("id") == "new-chat"


def test_chat_by_search_live_delivery_list_update_read_receipts_and_typing(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    a, b = browsers(), browsers()
    sign_in(a, server, alice)
    sign_in(b, server, bob)
    wait(b, lambda d: by_id(d, "list-empty").is_displayed())

    open_chat_by_search(a, "bui", "Bob Builder")
    wait(a, lambda d: by_id(d, "chat-empty").text == "Say hello!")
    type_and_send(a, "Hello Bob 👋")
    wait(a, lambda d: bubbles(d) == ["Hello Bob 👋"] and statuses(d) in (["sent"], ["delivered"]))

    # Bob's list updates live: the new conversation, the preview, one unread. Alice is a stranger
    # until Bob replies, so he does not see whether she is online.
    rows = wait(b, lambda d: (r := list_rows(d)) and r[0]["badge"] == "1" and r)
    assert not rows[0]["online"]
    assert rows[0]["name"] == "Alice Liddell" and rows[0]["preview"] == "Hello Bob 👋"
    # Bob's device stored it: delivered.
    wait(a, lambda d: statuses(d) == ["delivered"])
    assert a.execute_script("return document.querySelector('#conversation-list .row-preview').textContent") == "You: Hello Bob 👋"

    # Bob opens the chat: the message is read, Alice sees blue ticks, Bob's badge clears.
    b.find_element(By.CSS_SELECTOR, "#conversation-list button").click()
    wait(b, lambda d: bubbles(d) == ["Hello Bob 👋"])
    wait(a, lambda d: statuses(d) == ["read"])
    wait(b, lambda d: list_rows(d)[0]["badge"] is None)

    # Typing shows on the other side, and goes when the message arrives.
    by_id(b, "composer-input").send_keys("Hi Al")
    wait(a, lambda d: by_id(d, "chat-status").text == "typing…")
    by_id(b, "composer-input").send_keys("ice!" + Keys.ENTER)
    wait(a, lambda d: bubbles(d) == ["Hello Bob 👋", "Hi Alice!"])
    wait(a, lambda d: by_id(d, "chat-status").text == "online")
    announced = a.execute_script("return document.querySelector('#announcer').textContent").replace("\u2068", "").replace("\u2069", "")
    assert announced.endswith("New message from Bob Builder: Hi Alice!"), announced


def test_any_text_renders_as_text_and_never_as_markup(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    tricky = ["<script>window.__pwned = true</script>", "<img src=x onerror=\"window.__pwned=true\">",
              "שלום עולם — مرحبا", "👨‍👩‍👧‍👦 🇺🇦 ✨", "two\nlines"]
    conversation = None
    for text in tricky:
        conversation = server.send(alice, text, recipient=bob["user"]["id"], conversation=conversation)["conversationId"]
    b = browsers()
    sign_in(b, server, bob)
    b.get(server.url + "/#/c/" + conversation)
    wait(b, lambda d: bubbles(d) == tricky)
    assert b.execute_script("return window.__pwned === undefined")
    assert b.execute_script("return document.querySelectorAll('#message-list script, #message-list img').length") == 0
    direction = b.execute_script("return getComputedStyle(document.querySelectorAll('#message-list .bubble .text')[2]).unicodeBidi")
    assert direction == "plaintext"


def test_the_composer_enforces_the_character_limit(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    a = browsers()
    sign_in(a, server, alice)
    a.get(server.url + "/#/u/" + bob["user"]["id"])
    wait(a, lambda d: by_id(d, "chat-name").text == "Bob")
    send = by_id(a, "send")
    assert not send.is_enabled(), "empty text cannot be sent"
    by_id(a, "composer-input").send_keys("   ")
    assert not send.is_enabled(), "whitespace cannot be sent"

    def set_text(text):
        a.execute_script("const t = document.getElementById('composer-input'); t.value = arguments[0];"
                         "t.dispatchEvent(new Event('input'))", text)

    # Only invisible characters (zero-width space, Hangul filler, blank Braille) would be an empty bubble.
    for blank in ["\u200b", "\u3164 \u2800", "\u200d\ufe0f\n\u200b"]:
        set_text(blank)
        assert not send.is_enabled(), repr(blank)
        by_id(a, "composer-input").send_keys(Keys.ENTER)
        assert bubbles(a) == [], "Enter does not send it"
    set_text("\u200bhi\u200b")
    assert send.is_enabled()
    set_text("🙂" * 10000)
    assert send.is_enabled()
    assert by_id(a, "composer-counter").text == "10,000 / 10,000"
    set_text("🙂" * 10000 + "x")
    assert not send.is_enabled()
    assert by_id(a, "composer-counter").text == "10,001 / 10,000"
    by_id(a, "composer-input").send_keys(Keys.ENTER)
    assert bubbles(a) == [], "Enter does not send over the limit"
    set_text("a" * 9000)
    assert not by_id(a, "composer-counter").is_displayed(), "no counter up to 9,000"
    # A letter under more marks than the server takes on one character (32 code points) says why it cannot go.
    set_text("zalgo a" + "\u0301" * 32)
    assert not send.is_enabled()
    assert by_id(a, "composer-counter").text == "A character carries more than 32 accents or marks: remove some to send."
    by_id(a, "composer-input").send_keys(Keys.ENTER)
    assert bubbles(a) == [], "Enter does not send it"
    set_text("zalgo a" + "\u0301" * 31)
    assert send.is_enabled() and not by_id(a, "composer-counter").is_displayed()


def open_chat_of_two(server, browsers, first_text):
    """Alice has written `first_text` to Bob, and each has the chat open in a browser of their own."""
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    conversation = server.send(alice, first_text, recipient=bob["user"]["id"])["conversationId"]
    a, b = browsers(), browsers()
    for browser, session in ((a, alice), (b, bob)):
        sign_in(browser, server, session)
        browser.get(server.url + "/#/c/" + conversation)
    return alice, bob, conversation, a, b


def test_a_message_written_offline_survives_a_reload_and_arrives_once(server, browsers):
    alice, bob, conversation, a, b = open_chat_of_two(server, browsers, "before the outage")
    wait(a, lambda d: bubbles(d) == ["before the outage"])
    wait(b, lambda d: bubbles(d) == ["before the outage"])
    # The app shell is cached by the service worker, so the page reloads even with the server down.
    wait(a, lambda d: d.execute_script("return navigator.serviceWorker.controller !== null"))

    server.stop()
    wait(a, lambda d: by_id(d, "offline-banner").is_displayed())
    type_and_send(a, "written offline")
    type_and_send(a, "also offline")
    wait(a, lambda d: bubbles(d)[-2:] == ["written offline", "also offline"] and statuses(d)[-2:] == ["sending", "sending"])
    # Kept in localStorage: still there, still sending, in order. Without the browser's own cache, so every
    # module the page imports has to come from the service worker's list.
    a.execute_cdp_cmd("Network.clearBrowserCache", {})
    a.refresh()
    wait(a, lambda d: bubbles(d)[-2:] == ["written offline", "also offline"] and statuses(d)[-2:] == ["sending", "sending"])
    outbox = json.loads(a.execute_script("return localStorage.getItem('parley.outbox.' + arguments[0])", alice["user"]["id"]))
    assert [entry["text"] for entry in outbox] == ["written offline", "also offline"]

    server.start()
    wait(b, lambda d: bubbles(d) == ["before the outage", "written offline", "also offline"], timeout=40)
    wait(a, lambda d: all(s in ("delivered", "read") for s in statuses(d)[-2:]), timeout=40)
    assert not by_id(a, "offline-banner").is_displayed()
    history = requests.get(server.url + f"/v1/conversations/{conversation}/messages",
                           headers={"Authorization": "Bearer " + bob["token"]}).json()["messages"]
    assert [m["text"] for m in history] == ["before the outage", "written offline", "also offline"]


def test_scrolling_to_the_top_loads_older_messages_without_jumping(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    conversation = None
    for i in range(1, 131):
        conversation = server.send(alice, f"message {i}", recipient=bob["user"]["id"], conversation=conversation)["conversationId"]
    b = browsers()
    sign_in(b, server, bob)
    b.get(server.url + "/#/c/" + conversation)
    wait(b, lambda d: len(bubbles(d)) == 50 and bubbles(d)[-1] == "message 130")
    anchor_text = "message 81"
    b.execute_script("document.getElementById('messages').scrollTop = 0")
    wait(b, lambda d: len(bubbles(d)) == 100)
    # The message that was on top stays where the reader is looking (no jump to the new top).
    top = b.execute_script("""const m = document.getElementById('messages');
        const anchor = [...document.querySelectorAll('#message-list .bubble .text')].find(x => x.textContent === arguments[0]);
        return anchor.getBoundingClientRect().top - m.getBoundingClientRect().top""", anchor_text)
    assert 0 <= top < 200, top
    b.execute_script("document.getElementById('messages').scrollTop = 0")
    wait(b, lambda d: len(bubbles(d)) == 130 and bubbles(d)[0] == "message 1")


def test_pages_are_served_with_a_strict_content_security_policy(server):
    response = requests.get(server.url + "/")
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "unsafe" not in policy
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    source = "".join(p.read_text() for p in (server_root() / "Public").rglob("*") if p.suffix in (".js", ".html"))
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"):
        assert sink not in source


def server_root():
    import pathlib
    return pathlib.Path(__file__).resolve().parents[2]


def test_phone_width_keyboard_use_and_labels(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    server.send(bob, "hi from bob", recipient=alice["user"]["id"])
    a = browsers(width=390, height=800)
    sign_in(a, server, alice)
    row = wait(a, lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, "#conversation-list button")), None))
    assert not by_id(a, "chat-pane").is_displayed(), "one pane at a time on a phone"
    # Keyboard only: focus the conversation and press Enter.
    a.execute_script("arguments[0].focus()", row)
    row.send_keys(Keys.ENTER)
    wait(a, lambda d: by_id(d, "chat-pane").is_displayed() and bubbles(d) == ["hi from bob"])
    assert not by_id(a, "list-pane").is_displayed()
    assert a.switch_to.active_element == by_id(a, "composer-input")
    by_id(a, "back").click()
    wait(a, lambda d: by_id(d, "list-pane").is_displayed())
    # Every control has an accessible name; incoming messages have a live region.
    unnamed = a.execute_script("""return [...document.querySelectorAll('button, input, textarea')].filter(e =>
        !(e.getAttribute('aria-label') || e.textContent.trim() || (e.id && document.querySelector(`label[for="${e.id}"]`)))
      ).map(e => e.id || e.outerHTML.slice(0, 60))""")
    assert unnamed == []
    assert by_id(a, "announcer").get_attribute("aria-live") == "polite"
    assert a.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), "no sideways scrolling"


def websocket_count(url):
    import re
    text = requests.get(url + "/metrics", timeout=5).text
    match = re.search(r"^parley_websocket_connections(?:\{[^}]*\})? ([0-9.]+)$", text, re.M)
    return int(float(match.group(1))) if match else 0


def test_leaving_the_page_closes_its_connection_and_coming_back_resumes(server, browsers):
    """A page left for another (kept in the back/forward cache) must not hold its socket, and its
    user 'online', until the server's idle limit."""
    alice = server.register("alice", "Alice Liddell")
    a = browsers()
    sign_in(a, server, alice)
    wait(a, lambda d: websocket_count(server.url) == 1)
    for _ in range(2):
        sign_in(a, server, alice)
    wait(a, lambda d: by_id(d, "list-empty").is_displayed())
    wait(a, lambda d: websocket_count(server.url) == 1)
    a.get("about:blank")
    wait(a, lambda d: websocket_count(server.url) == 0)
    a.back()
    wait(a, lambda d: websocket_count(server.url) == 1)
