"""Group conversations in the web client: three people in three real browsers against a real server.

Every wait is on a condition (WebDriverWait); "never arrives" is shown by ordering, not by time: an
event written after the one that must not arrive is seen first, and the stream is in order.
"""
import re
import uuid

import requests
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from conftest import page_problems, sign_in
from test_web_client import bubbles, by_id, statuses, type_and_send


def wait(driver, condition, timeout=15):
    """Waits for a condition; a row replaced by a re-render while it was read is read again."""
    return WebDriverWait(driver, timeout, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)).until(
        lambda d: condition(d))


# MARK: helpers

def call(server, session, method, path, body=None):
    return requests.request(method, server.url + path, json=body, timeout=10,
                            headers={"Authorization": "Bearer " + session["token"]})


def befriend(server, a, b):
    """Both write in their direct conversation: contacts, so either may put the other in a group."""
    conversation = server.send(a, "hi", recipient=b["user"]["id"])["conversationId"]
    server.send(b, "hello", conversation=conversation)
    return conversation


def create_group(server, owner, title, members):
    response = call(server, owner, "POST", "/v1/groups",
                    {"clientId": str(uuid.uuid4()), "title": title, "memberIds": [m["user"]["id"] for m in members]})
    assert response.status_code == 201, response.text
    return response.json()["conversation"]["id"]


def people(server, *names):
    cast = {"ada": "Ada Lovelace", "grace": "Grace Hopper", "alan": "Alan Turing", "linus": "Linus Torvalds"}
    return [server.register(name, cast[name]) for name in names]


def crew(server, title):
    """Ada, Grace and Alan, both Ada's contacts, in Ada's group `title`: (ada, grace, alan, its id)."""
    ada, grace, alan = people(server, "ada", "grace", "alan")
    befriend(server, ada, grace)
    befriend(server, ada, alan)
    return ada, grace, alan, create_group(server, ada, title, [grace, alan])


def open_app(browsers, server, session, **options):
    driver = browsers(**options)
    sign_in(driver, server, session)
    wait(driver, lambda d: d.execute_script("return !document.getElementById('app-view').hidden"))
    return driver


def open_group(driver, server, conversation):
    driver.get(server.url + "/#/c/" + conversation)
    wait(driver, lambda d: d.execute_script("return !!document.querySelector('#chat-name button')"))


def row(driver, name):
    return next((li for li in driver.find_elements(By.CSS_SELECTOR, "#conversation-list li")
                 if li.find_element(By.CSS_SELECTOR, ".row-name").text == name), None)


def words(text):
    """What a person reads: without the invisible isolates names are set in (format.js `isolate`)."""
    return text.replace("\u2068", "").replace("\u2069", "")


def row_info(driver, name):
    return driver.execute_script("""
        const li = [...document.querySelectorAll('#conversation-list li')].find(li => li.querySelector('.row-name')?.textContent === arguments[0]);
        return li && {preview: li.querySelector('.row-preview').textContent.replace(/[\u2068\u2069]/g, ''), online: !!li.querySelector('.dot'),
          badges: [...li.querySelectorAll('.badge')].map(b => b.textContent), label: li.querySelector('button').getAttribute('aria-label')}""", name)


def entry_lines(driver):
    return driver.execute_script("return [...document.querySelectorAll('#message-list .entry-line')].map(s => s.textContent.replace(/[\u2068\u2069]/g, ''))")


def senders(driver):
    """Each incoming bubble's sender line as (name, colour class), or None where the run continues."""
    return driver.execute_script("""return [...document.querySelectorAll('#message-list li.message.theirs')].map(li => {
        const s = li.querySelector('.sender'); return s ? [s.textContent, [...s.classList].find(c => /^sender-\\d$/.test(c))] : null})""")


def status_line(driver):
    return words(by_id(driver, "chat-status").text)


def announcements(driver):
    return words(driver.execute_script("return document.getElementById('announcer').textContent"))


def open_panel(driver):
    by_id(driver, "chat-name").find_element(By.TAG_NAME, "button").click()
    wait(driver, lambda d: d.execute_script("return document.getElementById('group-dialog').open"))


def members_in_panel(driver):
    return driver.execute_script("""return [...document.querySelectorAll('#member-list li')].map(li => ({
        name: li.querySelector('.row-name').textContent, role: li.querySelector('.role')?.textContent ?? null,
        actions: [...li.querySelectorAll('button')].map(b => b.getAttribute('aria-label'))}))""")


def member_action(driver, label):
    return wait(driver, lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, "#member-list button")
                                        if b.get_attribute("aria-label") == label), None))


def pick_person(driver, input_id, results_id, query, display_name):
    box = by_id(driver, input_id)
    box.clear()
    box.send_keys(query)
    result = wait(driver, lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, f"#{results_id} button")
                                          if display_name in b.text), None))
    result.click()


def chips(driver, chips_id):
    return driver.execute_script(f"return [...document.querySelectorAll('#{chips_id} .chip span')].map(s => s.textContent.replace(/[\u2068\u2069]/g, ''))")


def dialog_open(driver, dialog_id):
    return driver.execute_script(f"return document.getElementById('{dialog_id}').open")


# MARK: tests

def test_a_group_made_in_the_browser_appears_live_for_its_members_with_names_typing_and_ticks(server, browsers):
    ada, grace, alan = people(server, "ada", "grace", "alan")
    befriend(server, ada, grace)
    befriend(server, ada, alan)
    a, g, l = (open_app(browsers, server, s) for s in (ada, grace, alan))
    wait(g, lambda d: row(d, "Ada Lovelace"))
    wait(l, lambda d: row(d, "Ada Lovelace"))

    by_id(a, "new-group").click()
    wait(a, lambda d: dialog_open(d, "new-group-dialog"))
    assert a.switch_to.active_element == by_id(a, "group-title-input"), "the dialog takes focus"
    by_id(a, "new-group-create").click()
    wait(a, lambda d: by_id(d, "new-group-error").text == "Give the group a name.")
    by_id(a, "group-title-input").send_keys("  Trip  ")
    pick_person(a, "group-people-input", "group-people-results", "gra", "Grace Hopper")
    pick_person(a, "group-people-input", "group-people-results", "tur", "Alan Turing")
    assert chips(a, "group-chips") == ["Grace Hopper", "Alan Turing"]
    by_id(a, "new-group-create").click()

    # Ada lands in the new group; the creation is a line of its own.
    wait(a, lambda d: not dialog_open(d, "new-group-dialog") and by_id(d, "chat-name").text == "Trip")
    wait(a, lambda d: status_line(d) == "3 members")
    lines = wait(a, lambda d: (e := entry_lines(d)) and len(e) == 2 and e)
    assert lines[0] == "You created the group “Trip”"
    assert lines[1].startswith("You added ") and "Grace Hopper" in lines[1] and "Alan Turing" in lines[1]
    wait(a, lambda d: d.switch_to.active_element == by_id(d, "composer-input"))
    conversation = a.execute_script("return location.hash.slice(4)")
    assert conversation.startswith("grp_")

    # It appears live in the others' lists: title, the creation as preview, no online dot.
    for driver in (g, l):
        info = wait(driver, lambda d: row_info(d, "Trip"))
        assert info["preview"] == "Ada Lovelace created the group “Trip”", info
        assert not info["online"] and info["badges"] == []
    row(g, "Trip").find_element(By.TAG_NAME, "button").click()
    open_group(l, server, conversation)
    wait(g, lambda d: by_id(d, "chat-name").text == "Trip" and len(entry_lines(d)) == 2)
    added = entry_lines(g)[1]
    assert added.startswith("Ada Lovelace added ") and "you" in added and "Alan Turing" in added, added

    # Typing names people.
    by_id(g, "composer-input").send_keys("Hel")
    wait(a, lambda d: status_line(d) == "Grace Hopper is typing…")
    by_id(l, "composer-input").send_keys("On my")
    wait(a, lambda d: status_line(d) == "Grace Hopper and Alan Turing are typing…")
    by_id(g, "composer-input").send_keys("lo all" + Keys.ENTER)
    wait(a, lambda d: status_line(d) == "Alan Turing is typing…")
    typing = a.execute_script("return import('/js/format.js').then(f => [3, 4].map(n => f.typingText(['A', 'B', 'C', 'D'].slice(0, n))))")
    assert typing == ["3 people are typing…", "4 people are typing…"]
    by_id(l, "composer-input").send_keys(" way" + Keys.ENTER)
    type_and_send(l, "Bringing snacks")
    wait(a, lambda d: bubbles(d) == ["Hello all", "On my way", "Bringing snacks"])
    wait(a, lambda d: status_line(d) == "3 members")

    # Sender names above others' words, once per run, in a colour that is the same in every browser.
    names = senders(a)
    assert [n[0] if n else None for n in names] == ["Grace Hopper", "Alan Turing", None], names
    assert senders(g)[0][0] == "Alan Turing" and senders(g)[0][1] == names[1][1], "Alan's colour is Alan's everywhere"
    assert re.search(r"New message from Grace Hopper in “Trip”: Hello all", announcements(a))
    labels = [li.accessible_name for li in a.find_elements(By.CSS_SELECTOR, "#message-list li.message")]
    assert labels[0].startswith("Grace Hopper, ") and labels[0].endswith(": Hello all"), labels

    # My message in the group: read once everyone has read it (both have the chat open and focused).
    type_and_send(a, "See you all at 9")
    wait(a, lambda d: statuses(d) == ["read"], timeout=20)
    wait(g, lambda d: row_info(d, "Trip")["preview"] == "Ada Lovelace: See you all at 9")
    wait(a, lambda d: row_info(d, "Trip")["preview"] == "You: See you all at 9")


def test_an_answer_lost_on_the_way_back_is_retried_with_the_same_client_id_and_makes_one_group(server, browsers):
    ada, grace = people(server, "ada", "grace")
    befriend(server, ada, grace)
    a = browsers()
    # The first create reaches the server, but its answer never reaches the page (the network dropped).
    a.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        const realFetch = window.fetch.bind(window);
        window.__creates = [];
        window.fetch = async (input, init) => {
          if (String(input).endsWith('/v1/groups')) {
            window.__creates.push(JSON.parse(init.body).clientId);
            const response = await realFetch(input, init);
            if (window.__creates.length === 1) throw new TypeError('Failed to fetch');
            return response;
          }
          return realFetch(input, init);
        };"""})
    sign_in(a, server, ada)
    wait(a, lambda d: row(d, "Grace Hopper"))
    by_id(a, "new-group").click()
    by_id(a, "group-title-input").send_keys("Once")
    pick_person(a, "group-people-input", "group-people-results", "grace", "Grace Hopper")
    by_id(a, "new-group-create").click()
    wait(a, lambda d: "Cannot reach the server" in by_id(d, "new-group-error").text)
    assert dialog_open(a, "new-group-dialog"), "the dialog stays, with what was typed"
    by_id(a, "new-group-create").click()
    wait(a, lambda d: by_id(d, "chat-name").text == "Once")
    creates = a.execute_script("return window.__creates")
    assert len(creates) == 2 and creates[0] == creates[1], creates
    groups = [c for c in server.conversations(ada) if c["kind"] == "group"]
    assert [c["title"] for c in groups] == ["Once"], "one group, not two"


def test_a_stranger_is_invited_and_accepts_while_another_declines(server, browsers):
    ada, grace, linus, alan = people(server, "ada", "grace", "linus", "alan")
    befriend(server, ada, grace)
    a, n, l = (open_app(browsers, server, s) for s in (ada, linus, alan))
    wait(a, lambda d: row(d, "Grace Hopper"))
    wait(n, lambda d: by_id(d, "list-empty").is_displayed())

    by_id(a, "new-group").click()
    by_id(a, "group-title-input").send_keys("Book club")
    pick_person(a, "group-people-input", "group-people-results", "grace", "Grace Hopper")
    search = by_id(a, "group-people-input")
    search.clear()
    search.send_keys("linus")
    wait(a, lambda d: any("Linus Torvalds" in b.text for b in d.find_elements(By.CSS_SELECTOR, "#group-people-results button")))
    search.send_keys(Keys.ENTER)  # picks the person found; does not submit the form
    wait(a, lambda d: chips(d, "group-chips") == ["Grace Hopper", "Linus Torvalds"])
    assert dialog_open(a, "new-group-dialog")
    by_id(a, "new-group-create").click()
    wait(a, lambda d: by_id(d, "chat-name").text == "Book club")
    wait(a, lambda d: by_id(d, "toast").is_displayed() and by_id(d, "toast").text == "Invitations sent to Linus Torvalds")
    conversation = a.execute_script("return location.hash.slice(4)")

    # Linus, a stranger to Ada, gets an invitation live, and nothing of the group until he accepts.
    invitation = wait(n, lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, "#invitation-list li")), None))
    assert words(invitation.find_element(By.CSS_SELECTOR, ".invitation-text").text) == "Ada Lovelace (@ada) invited you to “Book club”"
    assert row(n, "Book club") is None
    assert "Ada Lovelace (@ada) invited you to “Book club”" in announcements(n)
    invitation.find_element(By.XPATH, ".//button[text()='Accept']").click()
    wait(n, lambda d: by_id(d, "chat-name").text == "Book club" and "You joined" in entry_lines(d))
    wait(n, lambda d: not d.find_elements(By.CSS_SELECTOR, "#invitation-list li") and row(d, "Book club"))
    wait(a, lambda d: "Linus Torvalds joined" in entry_lines(d))
    wait(a, lambda d: status_line(d) == "3 members")
    type_and_send(n, "Thanks for the invite")
    wait(a, lambda d: "Thanks for the invite" in bubbles(d) and senders(d)[-1][0] == "Linus Torvalds")

    # Alan is invited by an add; he declines: the invitation goes and the group stays unknown to him.
    response = call(server, ada, "POST", f"/v1/conversations/{conversation}/members",
                    {"clientId": str(uuid.uuid4()), "userIds": [alan["user"]["id"]]})
    assert response.status_code == 201 and response.json()["invited"] == [alan["user"]["id"]], response.text
    invitation = wait(l, lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, "#invitation-list li")), None))
    invitation.find_element(By.XPATH, ".//button[text()='Decline']").click()
    wait(l, lambda d: not by_id(d, "invitations").is_displayed())
    assert call(server, alan, "GET", "/v1/invitations").json()["invitations"] == []
    assert call(server, alan, "GET", f"/v1/conversations/{conversation}").status_code == 404
    l.refresh()
    wait(l, lambda d: by_id(d, "list-empty").is_displayed())
    assert not by_id(l, "invitations").is_displayed()


def test_roles_and_a_removal_mid_conversation_the_removed_member_keeps_history_and_gets_nothing_newer(server, browsers):
    ada, grace, alan, conversation = crew(server, "Project")
    server.send(alan, "Draft is ready", conversation=conversation)
    a, g, l = (open_app(browsers, server, s) for s in (ada, grace, alan))
    for driver in (a, g, l):
        open_group(driver, server, conversation)
        wait(driver, lambda d: bubbles(d) == ["Draft is ready"])

    # The owner's panel: roles, and what only the owner may do.
    open_panel(a)
    wait(a, lambda d: len(members_in_panel(d)) == 3)
    panel = {m["name"]: m for m in members_in_panel(a)}
    assert panel["Ada Lovelace (You)"]["role"] == "Owner" and panel["Ada Lovelace (You)"]["actions"] == []
    assert panel["Grace Hopper"]["actions"] == ["Make Grace Hopper an admin", "Remove Grace Hopper"]
    member_action(a, "Make Grace Hopper an admin").click()
    wait(a, lambda d: {m["name"]: m["role"] for m in members_in_panel(d)}["Grace Hopper"] == "Admin")
    assert a.execute_script("return document.activeElement.dataset.action") == "role", "focus stays on the toggled control"
    wait(g, lambda d: "Ada Lovelace made you an admin" in entry_lines(d))
    wait(a, lambda d: "You made Grace Hopper an admin" in entry_lines(d))
    a.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(a, lambda d: not dialog_open(d, "group-dialog"))
    assert a.switch_to.active_element == by_id(a, "chat-name").find_element(By.TAG_NAME, "button"), "focus returns to the header"

    # Grace, now an admin, removes Alan; she may not remove the owner, nor make admins.
    open_panel(g)
    wait(g, lambda d: {m["name"]: m["role"] for m in members_in_panel(d)}.get("Grace Hopper (You)") == "Admin")
    panel = {m["name"]: m for m in members_in_panel(g)}
    assert panel["Ada Lovelace"]["actions"] == [], "nobody removes the owner"
    assert panel["Alan Turing"]["actions"] == ["Remove Alan Turing"]
    member_action(g, "Remove Alan Turing").click()
    wait(g, lambda d: dialog_open(d, "confirm-dialog"))
    assert by_id(g, "confirm-text").text == "Remove Alan Turing (@alan) from “Project”?"
    by_id(g, "confirm-ok").click()
    wait(g, lambda d: [m["name"] for m in members_in_panel(d)] == ["Grace Hopper (You)", "Ada Lovelace"])
    g.switch_to.active_element.send_keys(Keys.ESCAPE)

    # Alan's view: the removal line, a notice instead of the composer, the history still there.
    wait(l, lambda d: by_id(d, "left-notice").is_displayed())
    assert by_id(l, "left-notice").text == "You were removed from this group."
    assert not by_id(l, "composer").is_displayed()
    assert "Grace Hopper removed you" in entry_lines(l)
    assert bubbles(l) == ["Draft is ready"]
    wait(a, lambda d: "Grace Hopper removed Alan Turing" in entry_lines(d) and status_line(d) == "2 members")

    # A message after the removal reaches the members and never Alan: a 1:1 message Ada sends him
    # afterwards is later in his stream, so once he has it, the group message would have come first.
    type_and_send(a, "Without Alan now")
    wait(g, lambda d: bubbles(d)[-1] == "Without Alan now")
    server.send(ada, "sorry about that", recipient=alan["user"]["id"])
    wait(l, lambda d: (r := row_info(d, "Ada Lovelace")) and r["preview"] == "sorry about that")
    assert bubbles(l) == ["Draft is ready"]
    assert row_info(l, "Project")["preview"] == "Grace Hopper removed you"
    assert "Without Alan now" not in l.execute_script("return document.body.textContent")
    assert "Without Alan now" not in [m["text"] for m in server.history(alan, conversation)]

    # Grace, on a fresh page, shares no other conversation with Alan: his name comes from his profile.
    g.refresh()
    open_group(g, server, conversation)
    wait(g, lambda d: bubbles(d)[0] == "Draft is ready" and senders(d)[0] and senders(d)[0][0] == "Alan Turing")
    assert "You removed Alan Turing" in entry_lines(g)

    # After a reload: still readable, still no composer.
    l.refresh()
    open_group(l, server, conversation)
    wait(l, lambda d: bubbles(d) == ["Draft is ready"] and by_id(d, "left-notice").is_displayed())
    assert not by_id(l, "composer").is_displayed()


def test_rename_shows_everywhere_and_leaving_asks_first_then_shows_the_notice(server, browsers):
    ada, grace, alan, conversation = crew(server, "Trip")
    a, g, l = (open_app(browsers, server, s) for s in (ada, grace, alan))
    open_group(a, server, conversation)
    open_group(l, server, conversation)
    wait(g, lambda d: row(d, "Trip"))

    open_panel(a)
    rename = by_id(a, "rename-input")
    assert rename.get_attribute("value") == "Trip"
    rename.clear()
    rename.send_keys("Trip 2" + Keys.ENTER)
    wait(a, lambda d: by_id(d, "group-dialog-title").text == "Trip 2")
    wait(a, lambda d: by_id(d, "chat-name").text == "Trip 2" and "You renamed the group to “Trip 2”" in entry_lines(d))
    wait(l, lambda d: by_id(d, "chat-name").text == "Trip 2" and "Ada Lovelace renamed the group to “Trip 2”" in entry_lines(d))
    info = wait(g, lambda d: row_info(d, "Trip 2"))  # in a list, the row follows
    assert info["preview"] == "Ada Lovelace renamed the group to “Trip 2”"
    assert row(g, "Trip") is None
    by_id(a, "group-dialog-close").click()

    # A member (not an admin) has no rename, no add, no remove: only "Leave group", which asks first.
    open_panel(l)
    assert not by_id(l, "rename-form").is_displayed() and not by_id(l, "add-members-toggle").is_displayed()
    assert all(m["actions"] == [] for m in members_in_panel(l))
    by_id(l, "leave-group").click()
    wait(l, lambda d: dialog_open(d, "confirm-dialog"))
    assert l.switch_to.active_element == by_id(l, "confirm-cancel"), "the safe choice has focus"
    by_id(l, "confirm-cancel").click()
    assert dialog_open(l, "group-dialog") and not by_id(l, "left-notice").is_displayed()
    by_id(l, "leave-group").click()
    wait(l, lambda d: dialog_open(d, "confirm-dialog"))
    by_id(l, "confirm-ok").click()
    wait(l, lambda d: not dialog_open(d, "group-dialog") and by_id(d, "left-notice").is_displayed())
    assert by_id(l, "left-notice").text == "You left this group."
    assert "You left" in entry_lines(l)
    wait(a, lambda d: "Alan Turing left" in entry_lines(d) and status_line(d) == "2 members")


def test_message_info_and_ticks_follow_who_has_received_and_read(server, browsers):
    ada, grace, alan, conversation = crew(server, "Ticks")
    a, g = open_app(browsers, server, ada), open_app(browsers, server, grace)
    open_group(a, server, conversation)
    open_group(g, server, conversation)
    type_and_send(a, "Who has this?")
    wait(a, lambda d: statuses(d) == ["sent"])
    # Grace has read it; Alan has no device online, so it is neither delivered nor read to everyone.
    wait(g, lambda d: bubbles(d) == ["Who has this?"])
    wait(a, lambda d: d.find_elements(By.CSS_SELECTOR, "#message-list .info-button"))
    assert statuses(a) == ["sent"]
    l = open_app(browsers, server, alan)  # Alan's device receives it (his list), without reading it
    wait(l, lambda d: (r := row_info(d, "Ticks")) and r["badges"] == ["1"])
    wait(a, lambda d: statuses(d) == ["delivered"], timeout=20)

    # "Message info", by keyboard: the list is one tab stop; from it the arrows reach my message, and
    # its menu (Enter) has "Message info" (the row's small "i" button is for the pointer).
    a.execute_script("document.getElementById('messages').focus()")
    ActionChains(a).send_keys(Keys.TAB).perform()
    assert not a.execute_script("return document.getElementById('message-list').contains(document.activeElement)"), \
        "the info button is no tab stop"
    a.execute_script("document.getElementById('messages').focus()")
    ActionChains(a).send_keys(Keys.ARROW_UP).perform()
    message_row = a.switch_to.active_element
    assert "Who has this?" in message_row.get_attribute("aria-label")
    ActionChains(a).send_keys(Keys.ENTER).perform()
    wait(a, lambda d: d.execute_script("return !document.getElementById('message-menu').hidden"))
    ActionChains(a).send_keys("m").perform()  # a letter goes to the item starting with it
    assert a.switch_to.active_element.text == "Message info"
    ActionChains(a).send_keys(Keys.ENTER).perform()
    wait(a, lambda d: dialog_open(d, "info-dialog") and d.find_elements(By.CSS_SELECTOR, "#info-body ul"))
    sections = a.execute_script("""return Object.fromEntries([...document.querySelectorAll('#info-body ul')].map(u =>
        [u.getAttribute('aria-label'), [...u.children].map(li => li.textContent)]))""")
    assert sections == {"Read by": ["Grace Hopper"], "Delivered to": ["Alan Turing"], "Waiting for": ["Nobody"]}, sections
    assert by_id(a, "info-text").text == "Who has this?"
    ActionChains(a).send_keys(Keys.ESCAPE).perform()
    wait(a, lambda d: not dialog_open(d, "info-dialog"))
    assert a.switch_to.active_element == message_row, "focus returns to the message"

    open_group(l, server, conversation)
    wait(a, lambda d: statuses(d) == ["read"], timeout=20)
    assert g.find_elements(By.CSS_SELECTOR, "#message-list .info-button") == [], "info is for my own messages"


def test_mentions_autocomplete_by_keyboard_are_highlighted_and_badge_the_list(server, browsers):
    ada, grace, alan, conversation = crew(server, "Mentions")
    a, g, l = (open_app(browsers, server, s) for s in (ada, grace, alan))
    open_group(a, server, conversation)
    open_group(l, server, conversation)
    wait(g, lambda d: row(d, "Mentions"))

    box, combobox = by_id(a, "composer-input"), by_id(a, "composer-box")
    assert combobox.get_attribute("role") == "combobox" and combobox.get_attribute("aria-expanded") == "false"
    assert box.get_attribute("aria-controls") == "mention-list"
    box.send_keys("Hey @")
    wait(a, lambda d: by_id(d, "mention-list").is_displayed())
    options = lambda d: [o.text for o in d.find_elements(By.CSS_SELECTOR, "#mention-list [role=option]")]
    assert sorted(options(a)) == ["Alan Turing @alan", "Grace Hopper @grace"], options(a)
    assert combobox.get_attribute("aria-expanded") == "true"
    first = box.get_attribute("aria-activedescendant")
    box.send_keys(Keys.ARROW_DOWN)
    assert box.get_attribute("aria-activedescendant") not in (None, first), "arrows move the active option"
    box.send_keys(Keys.ESCAPE)
    wait(a, lambda d: not by_id(d, "mention-list").is_displayed())
    assert box.get_attribute("value") == "Hey @" and combobox.get_attribute("aria-expanded") == "false"
    box.send_keys("gr")  # dismissed for this word: it stays closed while the word goes on
    assert not by_id(a, "mention-list").is_displayed()
    box.send_keys(Keys.BACKSPACE * 3 + "@gr")  # a new "@" offers again
    wait(a, lambda d: options(d) == ["Grace Hopper @grace"])
    box.send_keys(Keys.ENTER)  # picks; does not send
    wait(a, lambda d: box.get_attribute("value") == "Hey @grace ")
    assert bubbles(a) == [] and not by_id(a, "mention-list").is_displayed()
    box.send_keys("and @tu")
    wait(a, lambda d: options(d) == ["Alan Turing @alan"])
    box.send_keys(Keys.TAB)
    wait(a, lambda d: box.get_attribute("value") == "Hey @grace and @alan ")
    box.send_keys("look at this, not@grace" + Keys.ENTER)
    wait(a, lambda d: bubbles(d) == ["Hey @grace and @alan look at this, not@grace"])

    def mentions(d):
        return d.execute_script("return [...document.querySelectorAll('#message-list .text .mention')].map(m => m.className + ':' + m.textContent)")
    wait(a, lambda d: mentions(d) == ["mention:@grace", "mention:@alan"])
    wait(l, lambda d: mentions(d) == ["mention:@grace", "mention me:@alan"])
    assert l.execute_script("return getComputedStyle(document.querySelector('.mention.me')).backgroundColor") != "rgba(0, 0, 0, 0)"

    # Grace was not looking: her list says she was mentioned, until she reads it.
    info = wait(g, lambda d: (r := row_info(d, "Mentions")) and "@" in r["badges"] and r)
    assert info["badges"] == ["@", "1"] and "you were mentioned" in info["label"], info
    row(g, "Mentions").find_element(By.TAG_NAME, "button").click()
    wait(g, lambda d: mentions(d) == ["mention me:@grace", "mention:@alan"])
    wait(g, lambda d: row_info(d, "Mentions")["badges"] == [])


def test_unknown_and_malformed_stream_frames_break_nothing_and_the_stream_resumes(server, browsers):
    ada, grace = people(server, "ada", "grace")
    befriend(server, ada, grace)
    conversation = create_group(server, ada, "Future", [grace])
    g = browsers()
    g.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        const RealSocket = window.WebSocket;
        window.WebSocket = class extends RealSocket { constructor(...a) { super(...a); window.__socket = this; } };"""})
    sign_in(g, server, grace)
    open_group(g, server, conversation)
    wait(g, lambda d: d.execute_script("return window.__socket && window.__socket.readyState === 1"))
    server.send(ada, "before", conversation=conversation)
    wait(g, lambda d: bubbles(d) == ["before"])
    # A frame from a newer server, and malformed known ones: ignored.
    for frame in ('{"type":"reaction","emoji":"👍"}', '{"type":"receiptSummary"}', '{"type":"invitation"}', '{"type":42}'):
        g.execute_script("window.__socket.dispatchEvent(new MessageEvent('message', {data: arguments[0]}))", frame)
    server.send(ada, "after", conversation=conversation)
    wait(g, lambda d: bubbles(d) == ["before", "after"])
    # The resume position survived them: a reconnect replays what was missed, once.
    first = g.execute_script("const s = window.__socket; s.close(); return s")
    server.send(ada, "while away", conversation=conversation)
    wait(g, lambda d: d.execute_script("return window.__socket !== arguments[0] && window.__socket.readyState === 1", first))
    wait(g, lambda d: bubbles(d) == ["before", "after", "while away"])


def test_groups_at_phone_width_and_in_dark_mode_have_no_serious_axe_violation(server, browsers, tmp_path):
    ada, grace, alan, linus = people(server, "ada", "grace", "alan", "linus")
    befriend(server, ada, grace)
    befriend(server, ada, alan)
    conversation = create_group(server, ada, "Launch 🚀 with a rather long group title for a phone", [grace, alan])
    server.send(grace, "Morning @ada, the build is green", conversation=conversation)
    server.send(alan, "Great, shipping it", conversation=conversation)
    mine = server.send(ada, "Thanks both", conversation=conversation)
    invite = call(server, linus, "POST", "/v1/groups", {"clientId": str(uuid.uuid4()), "title": "Kernel", "memberIds": [ada["user"]["id"]]})
    assert invite.status_code == 201 and invite.json()["invited"] == [ada["user"]["id"]], invite.text
    problems = []

    def check(driver, name):
        problems.extend(page_problems(driver, name, tmp_path))

    for dark in (False, True):
        for width, height in ((1100, 760), (390, 780)):
            label = f"{'dark' if dark else 'light'} {width}"
            d = browsers(dark=dark, width=width, height=height)
            # A headless window is at least 500 px wide: a phone's 390 px is emulated.
            d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 700})
            sign_in(d, server, ada)
            assert d.execute_script("return window.innerWidth") == width
            wait(d, lambda d: row(d, "Launch 🚀 with a rather long group title for a phone")
                 and d.find_elements(By.CSS_SELECTOR, "#invitation-list li"))
            for element_id in ("new-chat", "new-group", "menu-button"):
                right = d.execute_script(f"return document.getElementById('{element_id}').getBoundingClientRect().right")
                assert right <= width, f"{label}: #{element_id} is off-screen"
            check(d, f"{label} list")
            by_id(d, "new-group").click()
            by_id(d, "group-title-input").send_keys("Picnic")
            pick_person(d, "group-people-input", "group-people-results", "grace", "Grace Hopper")
            check(d, f"{label} new group")
            by_id(d, "new-group-cancel").click()
            wait(d, lambda d: not dialog_open(d, "new-group-dialog"))
            open_group(d, server, conversation)
            wait(d, lambda d: len(bubbles(d)) == 3 and senders(d)[0] and d.find_elements(By.CSS_SELECTOR, ".mention.me"))
            d.execute_script("arguments[0].focus()", by_id(d, "composer-input"))
            by_id(d, "composer-input").send_keys("@")
            wait(d, lambda d: by_id(d, "mention-list").is_displayed())
            check(d, f"{label} chat")
            by_id(d, "composer-input").send_keys(Keys.ESCAPE)
            open_panel(d)
            wait(d, lambda d: len(members_in_panel(d)) == 3)
            check(d, f"{label} members")
            by_id(d, "group-dialog-close").click()
            d.execute_script("document.querySelector('#message-list li[data-seq=\"%d\"] .info-button').click()" % mine["seq"])
            wait(d, lambda d: d.find_elements(By.CSS_SELECTOR, "#info-body ul"))
            check(d, f"{label} message info")
    assert not problems, "\n".join(problems)


def test_names_are_isolated_so_none_can_reorder_the_words_around_it(server, browsers):
    """A name holding a direction override (an old account's; the server refuses new ones) or a
    right-to-left name is set in FSI…PDI in entry lines, previews and typing: "Eve\u202e" cannot
    turn "Ada added Eve and you" into "…Eveuoy dna"."""
    ada = server.register("ada", "Ada Lovelace")
    a = browsers()
    sign_in(a, server, ada)
    wait(a, lambda d: by_id(d, "conversation-list") is not None)
    lines = a.execute_script("""return import('/js/entries.js').then(m => m.entryLines(
        {senderId: 'ada', entry: {type: 'added', userIds: ['eve', 'me']}}, (id) => id === 'eve' ? 'Eve\u202e' : 'Ada', 'me'))""")
    assert lines == ["\u2068Ada\u2069 added \u2068Eve\u202e\u2069 and you"], lines


def test_enter_picks_who_the_box_names_now_and_never_takes_anyone_off(server, browsers):
    """A fast typist presses Enter before the search's debounce and answer: Enter waits for the
    answer to what the box says now, and only adds (Enter on someone picked already does nothing)."""
    ada, grace, linus = people(server, "ada", "grace", "linus")
    a = open_app(browsers, server, ada)
    by_id(a, "new-group").click()
    wait(a, lambda d: dialog_open(d, "new-group-dialog"))
    search = by_id(a, "group-people-input")
    search.send_keys("grace" + Keys.ENTER)
    wait(a, lambda d: chips(d, "group-chips") == ["Grace Hopper"])
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys("linus" + Keys.ENTER)  # the results still show "grace" when Enter arrives
    wait(a, lambda d: chips(d, "group-chips") == ["Grace Hopper", "Linus Torvalds"])
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys("grace" + Keys.ENTER)
    wait(a, lambda d: d.execute_script("""const b = document.querySelector('#group-people-results button.person');
        return !!b && b.textContent.includes('Grace Hopper') && b.getAttribute('aria-pressed') === 'true'"""))
    assert chips(a, "group-chips") == ["Grace Hopper", "Linus Torvalds"], "Enter on someone picked keeps them"
    assert dialog_open(a, "new-group-dialog")
