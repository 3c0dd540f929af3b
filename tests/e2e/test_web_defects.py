"""Web client defects found by trying it as a new user would: each test failed before its fix."""
import re
import time

from selenium.webdriver.common.by import By

from conftest import sign_in
from test_web_client import bubbles, by_id, type_and_send, wait


def test_a_long_preview_never_widens_the_phone_layout(server, browsers):
    me, other = server.register("alice", "Alice"), server.register("bob", "Bob With A Rather Long Display Name Indeed")
    long_text = "This preview is about ninety characters long, and then some: https://example.com/a/very/long/path/that/never/breaks?q=1 " \
                "Supercalifragilisticexpialidocious" * 2 + " 👨‍👩‍👧‍👦🇺🇦✨" * 10 + " שלום עולם"
    server.send(other, long_text, recipient=me["user"]["id"])
    phone = browsers(width=390, height=780)
    sign_in(phone, server, me)
    wait(phone, lambda d: d.find_elements(By.CSS_SELECTOR, "#conversation-list li"))
    width = phone.execute_script("return window.innerWidth")
    assert phone.execute_script("return document.documentElement.scrollWidth") <= width
    for element_id in ("new-chat", "menu-button", "filter-input"):
        right = phone.execute_script(f"return document.getElementById('{element_id}').getBoundingClientRect().right")
        assert right <= width, f"#{element_id} is off-screen ({right} > {width})"
    badge_right = phone.execute_script("return document.querySelector('#conversation-list .badge').getBoundingClientRect().right")
    assert badge_right <= width


def test_each_message_has_an_accessible_name_with_sender_time_status_and_text(server, browsers):
    me, bob = server.register("alice", "Alice"), server.register("bob", "Bob Builder")
    conversation = server.send(bob, "Hi Alice", recipient=me["user"]["id"])["conversationId"]
    browser = browsers()
    sign_in(browser, server, me)
    browser.get(server.url + "/#/c/" + conversation)
    wait(browser, lambda d: bubbles(d) == ["Hi Alice"])
    type_and_send(browser, "Hello Bob")
    wait(browser, lambda d: bubbles(d) == ["Hi Alice", "Hello Bob"])
    names = wait(browser, lambda d: (n := [li.accessible_name for li in d.find_elements(By.CSS_SELECTOR, "#message-list li.message")])
                 and re.match(r"^You, .*, (sent|delivered|read): Hello Bob$", n[1]) and n)
    assert re.match(r"^Bob Builder, \d{1,2}:\d{2}.*: Hi Alice$", names[0]), names[0]
    assert re.match(r"^You, \d{1,2}:\d{2}.*, (sent|delivered|read): Hello Bob$", names[1]), names[1]


def test_no_false_offline_banner_while_connecting_and_a_real_one_when_the_server_goes(server, browsers):
    me = server.register("alice", "Alice")
    browser = browsers()
    sign_in(browser, server, me)
    seen = []
    deadline = time.time() + 1.5
    while time.time() < deadline:  # the page is loading and the socket connecting
        seen.append(browser.execute_script("return !document.getElementById('offline-banner').hidden"))
        time.sleep(0.05)
    assert not any(seen), "the offline banner flashed while connecting"
    server.stop()
    try:
        wait(browser, lambda d: by_id(d, "offline-banner").is_displayed() and "offline" in by_id(d, "offline-banner").text, timeout=20)
    finally:
        server.start()
    wait(browser, lambda d: not by_id(d, "offline-banner").is_displayed(), timeout=30)


def test_a_dead_network_shows_offline_keeps_the_message_and_sends_it_when_the_network_returns(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob Builder")
    conversation = server.send(alice, "hi", recipient=bob["user"]["id"])["conversationId"]
    server.send(bob, "hello", conversation=conversation)  # contacts now: presence is shared
    a, b = browsers(), browsers()
    sign_in(b, server, bob)
    sign_in(a, server, alice)
    a.get(server.url + "/#/c/" + conversation)
    wait(a, lambda d: by_id(d, "chat-status").text == "online")
    a.execute_cdp_cmd("Network.enable", {})
    a.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    wait(a, lambda d: by_id(d, "offline-banner").is_displayed() and "offline" in by_id(d, "offline-banner").text, timeout=10)
    assert by_id(a, "chat-status").text != "online", "presence is unknown while we are offline"
    assert not a.find_elements(By.CSS_SELECTOR, "#conversation-list .dot")
    type_and_send(a, "written on a dead network")
    wait(a, lambda d: bubbles(d)[-1] == "written on a dead network"
         and d.execute_script("return document.querySelector('#message-list li:last-child .status').classList.contains('sending')"))
    time.sleep(1)
    assert "written on a dead network" not in b.execute_script("return document.body.textContent"), "nothing got through"
    assert [m["text"] for m in server.history(bob, conversation)] == ["hi", "hello"]
    a.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    wait(a, lambda d: not by_id(d, "offline-banner").is_displayed(), timeout=30)
    wait(a, lambda d: d.execute_script("return !document.querySelector('#message-list li:last-child .status').classList.contains('sending')"),
         timeout=30)
    history = server.history(bob, conversation)
    assert [m["text"] for m in history] == ["hi", "hello", "written on a dead network"], "sent once"


def test_opening_a_chat_of_mixed_heights_lands_on_the_newest_message_and_reads_it(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob Builder")
    conversation = None
    for index in range(1, 61):
        text = f"message {index}"
        if index % 3 == 0:
            text += "\n" + "\n".join(f"line {n}" for n in range(6))
        if index % 5 == 0:
            text += " " + "long words and more words " * 25
        conversation = server.send(bob, text, recipient=alice["user"]["id"], conversation=conversation)["conversationId"]
    for width, height in ((1100, 760), (390, 780)):
        browser = browsers(width=width, height=height)
        sign_in(browser, server, alice)
        browser.get(server.url + "/#/c/" + conversation)
        wait(browser, lambda d: len(bubbles(d)) >= 50 and bubbles(d)[-1].startswith("message 60"))

        def newest_in_view(d):
            return d.execute_script("""
                const scroller = document.getElementById('messages');
                const last = document.querySelector('#message-list li:last-child .bubble');
                const view = scroller.getBoundingClientRect(), box = last.getBoundingClientRect();
                return box.bottom <= view.bottom + 2 && box.bottom > view.top;""")
        wait(browser, newest_in_view, timeout=10)
        time.sleep(0.5)
        assert newest_in_view(browser), f"the newest message is out of view at width {width}"
    summary = [c for c in server.conversations(bob) if c["id"] == conversation][0]
    alice_member = [m for m in summary["members"] if m["userId"] == alice["user"]["id"]][0]
    assert alice_member["readSeq"] == 60, "the read cursor reaches the newest message"


def test_axe_finds_no_serious_or_critical_violation_on_any_screen(server, browsers):
    """axe-core (bundled by the axe-selenium-python wheel) on every screen, light and dark, desktop and
    phone: sign-in, list, search, chat."""
    from axe_selenium_python import Axe
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    conversation = server.send(bob, "Hello Alice", recipient=alice["user"]["id"])["conversationId"]
    server.send(alice, "Hi Bob, a longer reply so the bubble wraps onto a second line on a phone", conversation=conversation)
    problems = []
    for dark in (False, True):
        for width, height in ((1100, 760), (390, 780)):
            browser = browsers(dark=dark, width=width, height=height)
            screens = [
                ("sign-in", lambda d: d.get(server.url + "/")),
                ("list", lambda d: sign_in(d, server, alice)),
                ("search", lambda d: (by_id(d, "new-chat").click(), by_id(d, "search-input").send_keys("bob"))),
                ("chat", lambda d: d.get(server.url + "/#/c/" + conversation)),
            ]
            for name, show in screens:
                show(browser)
                time.sleep(0.8)
                axe = Axe(browser)
                axe.inject()
                results = axe.run()
                for violation in results["violations"]:
                    if violation["impact"] in ("serious", "critical"):
                        problems.append(f"{'dark' if dark else 'light'} {width}px {name}: {violation['id']} "
                                        f"{[node['target'] for node in violation['nodes'][:3]]}")
    assert not problems, "\n".join(problems)


def test_chat_details_as_users_expect_them(server, browsers):
    """Times without a leading zero in the user's locale; emoji-only messages enlarged; the character
    counter inside the composer, not over the messages; a focus ring on keyboard focus only."""
    from selenium.webdriver.common.keys import Keys
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    conversation = server.send(bob, "👍🎉", recipient=alice["user"]["id"])["conversationId"]
    server.send(bob, "nice 👍", conversation=conversation)
    browser = browsers()
    sign_in(browser, server, alice)
    browser.get(server.url + "/#/c/" + conversation)
    wait(browser, lambda d: bubbles(d) == ["👍🎉", "nice 👍"])
    times = browser.execute_script("return [...document.querySelectorAll('#message-list time')].map(t => t.textContent)")
    assert times and all(re.match(r"^[1-9]\d?:\d\d\s?(AM|PM)$", t) for t in times), times
    sizes = browser.execute_script("return [...document.querySelectorAll('#message-list .bubble')].map(b => parseFloat(getComputedStyle(b).fontSize))")
    assert sizes[0] >= 32 and sizes[1] < 20, sizes

    box = by_id(browser, "composer-input")
    browser.execute_script("arguments[0].value = 'x'.repeat(9500); arguments[0].dispatchEvent(new Event('input'))", box)
    wait(browser, lambda d: by_id(d, "composer-counter").is_displayed())
    inside = browser.execute_script("""const c = document.getElementById('composer-counter').getBoundingClientRect();
        const f = document.getElementById('composer').getBoundingClientRect();
        return c.top >= f.top && c.bottom <= f.bottom && c.left >= f.left && c.right <= f.right""")
    assert inside, "the counter sits in the composer"

    new_chat = by_id(browser, "new-chat")
    new_chat.click()
    assert browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", new_chat) == "none", "no ring after a click"
    by_id(browser, "filter-input").click()  # focus by mouse, then move it with the keyboard
    browser.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
    focused = browser.switch_to.active_element
    assert browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", focused) != "none", "a ring on keyboard focus"


def test_groups_ticks_and_a_failed_message_with_retry_and_delete(server, browsers):
    alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
    conversation = server.send(bob, "one", recipient=alice["user"]["id"])["conversationId"]
    for text in ("two", "three"):
        server.send(bob, text, conversation=conversation)
    browser = browsers()
    sign_in(browser, server, alice)
    browser.get(server.url + "/#/c/" + conversation)
    wait(browser, lambda d: bubbles(d) == ["one", "two", "three"])
    classes = browser.execute_script("return [...document.querySelectorAll('#message-list li.message')].map(li => li.className)")
    assert "group-start" in classes[0] and "group-end" not in classes[0]
    assert "group-start" not in classes[1] and "group-end" not in classes[1]
    assert "group-end" in classes[2], classes
    meta_inside = browser.execute_script("return !!document.querySelector('#message-list li.message .bubble .meta time')")
    assert meta_inside, "the time sits inside the bubble"

    # A message the server refuses for good (to myself) fails: a red mark, the reason, Retry and Delete.
    browser.get(server.url + "/#/u/" + alice["user"]["id"])
    wait(browser, lambda d: by_id(d, "composer-input").is_displayed())
    type_and_send(browser, "to nobody")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#message-list .status.failed"), timeout=15)
    buttons = [b.text for b in browser.find_elements(By.CSS_SELECTOR, "#message-list .actions button")]
    assert buttons == ["Retry", "Delete"], buttons
    browser.find_elements(By.CSS_SELECTOR, "#message-list .actions button")[1].click()
    wait(browser, lambda d: "to nobody" not in bubbles(d))


def test_filter_empty_state_action_and_the_account_menu(server, browsers):
    alice = server.register("alice", "Alice")
    browser = browsers()
    sign_in(browser, server, alice)
    wait(browser, lambda d: by_id(d, "list-empty").is_displayed())
    by_id(browser, "empty-start-chat").click()
    wait(browser, lambda d: by_id(d, "search-input").is_displayed())
    for name in ("bob", "carol"):
        other = server.register(name, name.capitalize() + " Example")
        server.send(other, f"hello from {name}", recipient=alice["user"]["id"])
    browser.refresh()
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#conversation-list li")) == 2)
    by_id(browser, "filter-input").send_keys("car")
    wait(browser, lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, "#conversation-list .row-name")] == ["Carol Example"])
    by_id(browser, "filter-input").send_keys("zzz")
    wait(browser, lambda d: by_id(d, "filter-empty").is_displayed())
    assert not by_id(browser, "logout").is_displayed(), "Log out is in a menu, not a bare link"
    by_id(browser, "menu-button").click()
    wait(browser, lambda d: by_id(d, "logout-all").is_displayed())
    by_id(browser, "logout-all").click()
    wait(browser, lambda d: by_id(d, "auth-view").is_displayed())
    me = server.session_status(alice)
    assert me == 401, "logging out on all devices ended this session too"
