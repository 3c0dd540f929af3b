"""Message search in the web client (docs/protocol.md "Search"): a real server and real browsers.

Every wait is on a condition. The results list carries `data-query`, the query its results answer,
so a test waits for the answer to exactly what it typed, never for a time.
"""
import re
import uuid

import requests
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from conftest import page_problems, sign_in
from test_web_client import bubbles, by_id
from test_web_groups import befriend, create_group, people, wait

# MARK: helpers

# Counts the page's search requests (the debounce) and records any alert() (an injected handler).
SPY = """
    window.__searches = [];
    window.__alerts = [];
    window.alert = (text) => window.__alerts.push(String(text));
    const realFetch = window.fetch.bind(window);
    // A gate on newest-page reads (`/messages?limit=50`, no before/after): while `__holdNewest` is set
    // they wait, counted in `__heldNewest`, until `__releaseNewest()`.
    window.__holdNewest = false; window.__heldNewest = 0;
    let release = null, released = new Promise((resolve) => release = resolve);
    window.__releaseNewest = () => { window.__holdNewest = false; release(); };
    window.fetch = async (url, options) => {
      if (String(url).startsWith('/v1/search')) window.__searches.push(String(url));
      if (window.__holdNewest && /[/]messages[?]limit=50$/.test(String(url))) { window.__heldNewest++; await released; }
      return realFetch(url, options);
    };
    // The rows that were highlighted (the highlight fades after a moment: a slow poll must not miss it).
    window.__flashed = [];
    new MutationObserver((mutations) => { for (const m of mutations) if (m.target.classList?.contains('flash')) window.__flashed.push(m.target.dataset.seq); })
      .observe(document, {subtree: true, attributes: true, attributeFilter: ['class']});"""

STATE = """const list = document.getElementById('message-search-results');
    const input = document.getElementById('message-search-input');
    return {open: document.getElementById('message-search-dialog').open, query: list.dataset.query ?? '', listHidden: list.hidden,
      status: document.getElementById('message-search-status').textContent,
      statusError: document.getElementById('message-search-status').classList.contains('error'),
      active: input.getAttribute('aria-activedescendant'),
      more: !document.getElementById('message-search-more').hidden,
      groups: [...list.querySelectorAll('[role=group]')].map(g => ({label: g.getAttribute('aria-label'),
        results: [...g.querySelectorAll('[role=option]')].map(o => ({id: o.id, selected: o.getAttribute('aria-selected'),
          sender: o.querySelector('.search-result-sender').textContent, time: o.querySelector('time').textContent,
          text: o.querySelector('.search-result-text').textContent,
          marks: [...o.querySelectorAll('mark')].map(m => m.textContent),
          elements: [...o.querySelector('.search-result-text').querySelectorAll('*')].map(e => e.tagName)}))}))}"""


def state(driver):
    return driver.execute_script(STATE)


def results(driver):
    return [r for g in state(driver)["groups"] for r in g["results"]]


def headers(session):
    return {"Authorization": "Bearer " + session["token"]}


def post(server, session, text, conversation=None, recipient=None, http=requests):
    body = {"clientId": str(uuid.uuid4()), "text": text}
    body["conversationId" if conversation else "recipientId"] = conversation or recipient
    response = http.post(server.url + "/v1/messages", json=body, headers=headers(session), timeout=10)
    assert response.ok, response.text
    return response.json()["message"]


def press_ctrl_k(driver):
    ActionChains(driver).key_down(Keys.CONTROL).send_keys("k").key_up(Keys.CONTROL).perform()
    wait(driver, lambda d: state(d)["open"])


def search(driver, query):
    """Types `query` into the open search and waits for the answer to it (results or "no results")."""
    box = by_id(driver, "message-search-input")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(Keys.BACKSPACE)
    box.send_keys(query)
    return wait(driver, lambda d: (s := state(d))["query"] == query and s["status"] != "Searching…" and s)


def open_with_spy(browsers, server, session, **options):
    driver = browsers(**options)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SPY})
    if options.get("width", 1100) < 700:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": options["width"], "height": options.get("height", 780), "deviceScaleFactor": 1, "mobile": True})
    sign_in(driver, server, session)
    wait(driver, lambda d: d.execute_script("return !document.getElementById('app-view').hidden && !!document.querySelector('#conversation-list li')"))
    return driver


def number(text):
    match = re.fullmatch(r"message (\d+)(?: .*)?", text)
    return int(match.group(1)) if match else None


def assert_consecutive(texts):
    """The shown rows are one run of history: message n, n+1, … with nothing missing or out of place."""
    numbers = [number(t) for t in texts]
    assert None not in numbers, texts
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), numbers


def seed(server, sender, recipient, count, special):
    """`count` messages "message 1" … in a new direct chat; `special` maps a number to extra words."""
    http = requests.Session()
    conversation = None
    for i in range(1, count + 1):
        text = f"message {i}" + (f" {special[i]}" if i in special else "")
        message = post(server, sender, text, conversation=conversation, recipient=None if conversation else recipient["user"]["id"], http=http)
        conversation = message["conversationId"]
    return conversation


# MARK: tests

def test_a_word_is_found_highlighted_and_grouped_by_conversation_with_one_request_per_pause(server, browsers):
    ada, grace, alan = people(server, "ada", "grace", "alan")
    direct = befriend(server, ada, grace)
    befriend(server, ada, alan)
    group = create_group(server, ada, "Launch crew", [grace, alan])
    post(server, grace, "The quarterly Report is ready", conversation=direct)
    post(server, ada, "Thanks for the report!", conversation=direct)
    post(server, alan, "report draft attached", conversation=group)
    post(server, alan, "nothing to see here", conversation=group)
    a = open_with_spy(browsers, server, ada)

    # The visible button opens it too, with the focus in the search field.
    by_id(a, "search-messages").click()
    wait(a, lambda d: state(d)["open"] and d.switch_to.active_element.get_attribute("id") == "message-search-input")
    found = search(a, "report")
    assert found["status"] == "3 results", found["status"]
    assert not found["listHidden"]
    # Newest first, grouped by conversation in the order they first appear: the group's title, the
    # other person's name for a direct chat; each hit names its sender and has a time.
    assert [g["label"] for g in found["groups"]] == ["Launch crew", "Grace Hopper"], found["groups"]
    assert [(r["sender"], r["text"], r["marks"]) for g in found["groups"] for r in g["results"]] == [
        ("Alan Turing", "report draft attached", ["report"]),
        ("You", "Thanks for the report!", ["report"]),
        ("Grace Hopper", "The quarterly Report is ready", ["Report"]),
    ]
    assert all(r["time"] and r["elements"] == ["MARK"] for r in results(a))
    # Typing a whole phrase quickly sends one request after the pause, not one per keystroke.
    a.execute_script("window.__searches = []")
    search(a, "quarterly report")
    searches = a.execute_script("return window.__searches")
    assert 1 <= len(searches) <= 2 and "q=quarterly+report" in searches[-1], searches
    assert [r["marks"] for r in results(a)] == [["quarterly", "Report"]]
    # Nothing found: said so, and the empty list is not shown.
    nothing = search(a, "zebra")
    assert nothing["status"] == "No messages found for “zebra”" and nothing["listHidden"] and nothing["groups"] == []


def test_japanese_one_character_accents_and_emoji_before_a_match(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    first = post(server, bob, "東京で会いましょう", recipient=alice["user"]["id"])
    conversation = first["conversationId"]
    post(server, bob, "Café crème", conversation=conversation)
    post(server, bob, "🎉 party at the café", conversation=conversation)
    a = open_with_spy(browsers, server, alice)
    press_ctrl_k(a)

    tokyo = search(a, "東京")
    assert [(r["text"], r["marks"]) for r in results(a)] == [("東京で会いましょう", ["東京"])], tokyo
    search(a, "京")
    assert [(r["text"], r["marks"]) for r in results(a)] == [("東京で会いましょう", ["京"])]
    # Accents fold: "cafe" finds "Café" and "café" (newest first); the marks are what is written.
    search(a, "cafe")
    assert [(r["text"], r["marks"]) for r in results(a)] == [("🎉 party at the café", ["café"]), ("Café crème", ["Café"])]
    # After an emoji (two UTF-16 units) the highlight is still exactly the word.
    search(a, "party")
    assert [(r["text"], r["marks"]) for r in results(a)] == [("🎉 party at the café", ["party"])]
    assert [g["label"] for g in state(a)["groups"]] == ["Bob Builder"]


def test_hostile_text_and_queries_show_as_text_and_never_error(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    hostile = 'Look: <img src=x onerror=alert(1)> and <b>bold</b> "quoted'
    post(server, bob, hostile, recipient=alice["user"]["id"])
    a = open_with_spy(browsers, server, alice)
    press_ctrl_k(a)

    found = search(a, "onerror")
    assert [(r["text"], r["marks"], r["elements"]) for r in results(a)] == [(hostile, ["onerror"], ["MARK"])], found
    # The query itself, markup and all: answered as text, nothing injected, no alert.
    found = search(a, "<img src=x onerror=alert(1)>")
    assert not found["statusError"], found["status"]
    assert all(r["text"] == hostile and set(r["elements"]) <= {"MARK"} for r in results(a)), results(a)
    for query in ('"unbalanced', 'NEAR * -x ^ (', '"quoted'):
        answered = search(a, query)
        assert not answered["statusError"] and answered["status"] != "Searching…", (query, answered["status"])
    assert a.execute_script("return document.querySelectorAll('#message-search-dialog img, #message-search-dialog b').length") == 0
    assert a.execute_script("return window.__alerts") == []
    assert by_id(a, "message-search-input").get_attribute("value") == '"quoted'


def test_a_result_far_back_opens_the_chat_there_and_scrolling_reaches_both_ends(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    conversation = seed(server, alice, bob, 160, {5: "pineapple early", 60: "pineapple middle"})
    b = open_with_spy(browsers, server, bob, height=700)
    press_ctrl_k(b)
    search(b, "pineapple middle")
    assert [r["text"] for r in results(b)] == ["message 60 pineapple middle"]
    # Keyboard: Down highlights the result, Enter opens it.
    by_id(b, "message-search-input").send_keys(Keys.ARROW_DOWN)
    wait(b, lambda d: (s := state(d))["active"] == s["groups"][0]["results"][0]["id"] and s["groups"][0]["results"][0]["selected"] == "true")
    by_id(b, "message-search-input").send_keys(Keys.ENTER)

    # The chat opens at message 60: in view, focused, highlighted; the newest are not loaded yet.
    wait(b, lambda d: d.execute_script("""const li = document.activeElement;
        return li?.matches('#message-list li.message') && li.dataset.seq === '60' && window.__flashed.includes('60')"""))
    assert not state(b)["open"]
    assert b.current_url.endswith("#/c/" + conversation)
    assert b.execute_script("""const li = document.querySelector('#message-list li[data-seq="60"]'), box = document.getElementById('messages').getBoundingClientRect();
        const r = li.getBoundingClientRect(); return r.top >= box.top && r.bottom <= box.bottom""")
    shown = bubbles(b)
    assert_consecutive(shown)
    assert number(shown[0]) < 60 < number(shown[-1]) < 160, (shown[0], shown[-1])
    wait(b, lambda d: by_id(d, "new-messages-pill").is_displayed() and by_id(d, "new-messages-pill").text == "Jump to latest ↓")

    # A live message while the window is in the history: it arrives (the list's preview shows it) but
    # is not put after message ~85 in the chat.
    post(server, alice, "live while away", conversation=conversation)
    wait(b, lambda d: d.execute_script("return document.querySelector('#conversation-list .row-preview').textContent") == "live while away")
    assert "live while away" not in bubbles(b)
    assert_consecutive(bubbles(b))

    # Upwards: older pages to the very first message, one run all the way.
    def scrolled_to_top(d):
        d.execute_script("document.getElementById('messages').scrollTop -= 500")
        return bubbles(d)[0] == "message 1"
    wait(b, scrolled_to_top, timeout=30)
    assert_consecutive(bubbles(b))

    # Downwards: newer pages until the live end, the live message last, in its place.
    def scrolled_to_bottom(d):
        d.execute_script("const m = document.getElementById('messages'); m.scrollTop = m.scrollHeight")
        return bubbles(d)[-1] == "live while away"
    wait(b, scrolled_to_bottom, timeout=30)
    shown = bubbles(b)
    assert_consecutive(shown[:-1])
    assert shown[-2] == "message 160", shown[-3:]
    wait(b, lambda d: not by_id(d, "new-messages-pill").is_displayed())
    # At the live end, news shows at once again.
    post(server, alice, "message 162 fresh", conversation=conversation)
    wait(b, lambda d: bubbles(d)[-1] == "message 162 fresh")

    # The early result: the chat is already open; the window moves back to it.
    press_ctrl_k(b)
    search(b, "pineapple early")
    assert [r["text"] for r in results(b)] == ["message 5 pineapple early"]
    b.find_element("css selector", "#message-search-results [role=option]").click()
    wait(b, lambda d: d.execute_script("return document.activeElement?.dataset?.seq === '5' && window.__flashed.includes('5')"))
    assert_consecutive(bubbles(b))
    # Sending from there goes back to the newest messages, mine at the end.
    box = by_id(b, "composer-input")
    box.send_keys("back at the end")
    box.send_keys(Keys.ENTER)
    wait(b, lambda d: bubbles(d)[-2:] == ["message 162 fresh", "back at the end"])


def test_keyboard_only_escape_returns_focus_more_results_and_order(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    conversation = None
    http = requests.Session()
    for i in range(1, 26):
        conversation = post(server, bob, f"kiwi number {i}", conversation=conversation,
                            recipient=None if conversation else alice["user"]["id"], http=http)["conversationId"]
    a = open_with_spy(browsers, server, alice)
    filter_box = by_id(a, "filter-input")
    filter_box.click()
    press_ctrl_k(a)
    assert a.switch_to.active_element.get_attribute("id") == "message-search-input"
    first = search(a, "kiwi")
    assert first["status"] == "20 results shown, more available" and first["more"], first["status"]
    box = by_id(a, "message-search-input")
    box.send_keys(Keys.ARROW_DOWN)
    box.send_keys(Keys.ARROW_DOWN)
    ids = [r["id"] for r in results(a)]
    wait(a, lambda d: state(d)["active"] == ids[1])
    box.send_keys(Keys.ARROW_UP)
    wait(a, lambda d: state(d)["active"] == ids[0] and results(d)[0]["selected"] == "true" and results(d)[1]["selected"] == "false")
    # Escape closes, and the focus is back where it was.
    box.send_keys(Keys.ESCAPE)
    wait(a, lambda d: not state(d)["open"])
    wait(a, lambda d: d.switch_to.active_element.get_attribute("id") == "filter-input")

    # Open again: more results with the cursor.
    press_ctrl_k(a)
    wait(a, lambda d: len(results(d)) == 20)
    by_id(a, "message-search-more").click()
    wait(a, lambda d: len(results(d)) == 25 and state(d)["status"] == "25 results" and not state(d)["more"])
    assert sorted(r["text"] for r in results(a)) == sorted(f"kiwi number {i}" for i in range(1, 26))
    # Best match: asked of the server with order=relevance.
    a.execute_script("window.__searches = []")
    from selenium.webdriver.support.ui import Select
    Select(by_id(a, "message-search-order")).select_by_value("relevance")
    wait(a, lambda d: any("order=relevance" in u for u in d.execute_script("return window.__searches")))
    wait(a, lambda d: len(results(d)) == 20 and state(d)["status"] != "Searching…")
    # Enter on a result (keyboard only) opens the chat at it.
    box = by_id(a, "message-search-input")
    box.click()
    box.send_keys(Keys.ARROW_DOWN)
    chosen = results(a)[0]["text"]
    box.send_keys(Keys.ENTER)
    wait(a, lambda d: d.execute_script("""const li = document.activeElement;
        return li?.matches('#message-list li.message') && li.querySelector('.text').textContent === arguments[0]""", chosen))
    assert a.current_url.endswith("#/c/" + conversation)


def test_phone_width_search_opens_the_chat_full_screen(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    message = post(server, bob, "Meet at the lighthouse at noon, a long message that wraps on a phone screen", recipient=alice["user"]["id"])
    post(server, bob, "see you", conversation=message["conversationId"])
    a = open_with_spy(browsers, server, alice, width=390, height=780)
    assert a.execute_script("return window.innerWidth") == 390
    button = by_id(a, "search-messages")
    assert button.is_displayed() and a.execute_script("return arguments[0].getBoundingClientRect().right", button) <= 390
    button.click()
    wait(a, lambda d: state(d)["open"])
    search(a, "lighthouse")
    box = a.execute_script("const r = document.getElementById('message-search-dialog').getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]")
    assert box[0] >= 0 and box[1] <= 390 and box[2] >= 0 and box[3] <= 780, box
    assert a.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    a.find_element("css selector", "#message-search-results [role=option]").click()
    wait(a, lambda d: d.execute_script(f"""return document.activeElement?.dataset?.seq === '{message["seq"]}'
        && document.getElementById('app-view').classList.contains('chat-open')"""))
    assert by_id(a, "chat-pane").is_displayed() and not by_id(a, "list-pane").is_displayed()
    assert a.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")


def test_axe_on_the_open_search_with_results_light_and_dark(server, browsers, tmp_path):
    ada, grace, alan = people(server, "ada", "grace", "alan")
    direct = befriend(server, ada, grace)
    befriend(server, ada, alan)
    group = create_group(server, ada, "Launch 🚀 with a rather long group title for a phone", [grace, alan])
    post(server, grace, "Is the launch checklist done? The launch is at noon", conversation=direct)
    post(server, alan, "launch " + "very long words " * 30 + "end", conversation=group)
    post(server, ada, "東京 launch party", conversation=group)
    problems, marks = [], {}
    for dark in (False, True):
        for width, height in ((1100, 760), (390, 780)):
            label = f"{'dark' if dark else 'light'} {width}"
            d = open_with_spy(browsers, server, ada, dark=dark, width=width, height=height)
            press_ctrl_k(d)
            search(d, "launch")
            assert len(results(d)) == 3
            by_id(d, "message-search-input").send_keys(Keys.ARROW_DOWN)
            wait(d, lambda d: state(d)["active"])
            problems += page_problems(d, f"search {label}", tmp_path)
            marks[label] = d.execute_script("return getComputedStyle(document.querySelector('#message-search-results mark')).backgroundColor")
    assert marks["light 1100"] != marks["dark 1100"], marks
    assert not problems, "\n".join(problems)


def test_jump_to_latest_and_sending_from_the_history_go_back_to_the_newest(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    seed(server, alice, bob, 120, {10: "walnut"})
    b = open_with_spy(browsers, server, bob, height=700)

    def open_walnut():
        press_ctrl_k(b)
        search(b, "walnut")
        by_id(b, "message-search-input").send_keys(Keys.ARROW_DOWN, Keys.ENTER)
        wait(b, lambda d: d.execute_script("return document.activeElement?.dataset?.seq === '10'"))
        assert number(bubbles(b)[-1]) < 120
        wait(b, lambda d: by_id(d, "new-messages-pill").text == "Jump to latest ↓")

    open_walnut()
    by_id(b, "new-messages-pill").click()
    wait(b, lambda d: bubbles(d)[-1] == "message 120" and not by_id(d, "new-messages-pill").is_displayed())
    assert_consecutive(bubbles(b))
    open_walnut()
    box = by_id(b, "composer-input")
    box.send_keys("sent from the past")
    box.send_keys(Keys.ENTER)
    wait(b, lambda d: bubbles(d)[-2:] == ["message 120", "sent from the past"])
    assert_consecutive(bubbles(b)[:-1])
    wait(b, lambda d: d.execute_script("return document.querySelector('#message-list li.message:last-child')?.dataset.seq") == "121")


def test_sending_while_the_newest_page_is_on_its_way_waits_for_it(server, browsers):
    # "Jump to latest" starts a read of the newest page; a send from the same detached window while that
    # read is held must wait for it (once it spun on the read in flight and froze the page).
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    seed(server, alice, bob, 120, {10: "walnut"})
    b = open_with_spy(browsers, server, bob, height=700)
    press_ctrl_k(b)
    search(b, "walnut")
    by_id(b, "message-search-input").send_keys(Keys.ARROW_DOWN, Keys.ENTER)
    wait(b, lambda d: by_id(d, "new-messages-pill").text == "Jump to latest ↓")
    b.execute_script("window.__holdNewest = true")
    by_id(b, "new-messages-pill").click()
    wait(b, lambda d: d.execute_script("return window.__heldNewest") == 1)
    box = by_id(b, "composer-input")
    box.send_keys("sent while the page is on its way")
    box.send_keys(Keys.ENTER)
    # The page still answers (a script runs) and shows no newer message before the page is in.
    assert b.execute_script("return window.__heldNewest") == 1
    assert "message 120" not in bubbles(b)
    b.execute_script("window.__releaseNewest()")
    wait(b, lambda d: bubbles(d)[-2:] == ["message 120", "sent while the page is on its way"])
    assert_consecutive(bubbles(b)[:-1])
    wait(b, lambda d: not by_id(d, "new-messages-pill").is_displayed())
