"""A display name changed in the web client's menu, or elsewhere: the dialog, its errors, and every open page
that shows the person (the list, the chat header, a group's sender lines), without a reload."""
import uuid

from selenium.webdriver.common.keys import Keys

from conftest import page_problems
from test_web_actions import SOCKET_SWITCH, open_chat, toast_text, websocket_count
from test_web_client import by_id
from test_web_groups import call, crew, open_app, wait

ROW_NAMES = "return [...document.querySelectorAll('#conversation-list .row-name')].map(n => n.textContent)"
SENDERS = "return [...document.querySelectorAll('#message-list li.message .sender')].map(s => s.textContent)"


def open_name_dialog(driver):
    by_id(driver, "menu-button").click()
    wait(driver, lambda d: by_id(d, "change-name").is_displayed() and by_id(d, "change-name")).click()
    return wait(driver, lambda d: d.execute_script("return document.getElementById('name-dialog').open") and by_id(d, "name-input"))


def test_a_name_changed_in_the_menu_shows_at_once_on_the_others_open_pages(server, browsers, tmp_path):
    ada, grace, alan, group = crew(server, "Book club")
    assert call(server, grace, "POST", "/v1/messages", {"clientId": "7b0c3c52-3f61-4c0b-9d5e-1f1f1f1f1f10", "conversationId": group,
                                                         "text": "chapter one?"}).status_code == 201
    # Ada's page, where Grace's name shows in the list (their direct chat) and on her line in the group.
    a = open_chat(browsers, server, ada, group)
    wait(a, lambda d: "Grace Hopper" in d.execute_script(SENDERS) and "Grace Hopper" in d.execute_script(ROW_NAMES))
    a.execute_script("window.__sameDocument = true")
    g = open_app(browsers, server, grace, dark=True, width=390, height=800)

    box = open_name_dialog(g)
    assert box.get_attribute("value") == "Grace Hopper"
    assert g.execute_script("return document.activeElement.id") == "name-input"
    problems = page_problems(g, "phone dark name dialog", tmp_path)
    assert not problems, "\n".join(problems)
    # Refused: the server's reason shows in the dialog, which stays open with the text as typed.
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("You", Keys.ENTER)
    error = wait(g, lambda d: by_id(d, "name-error").is_displayed() and by_id(d, "name-error").text)
    assert "You" in error and box.get_attribute("aria-invalid") == "true"
    assert g.execute_script("return document.getElementById('name-dialog').open")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("Grace B. Hopper", Keys.ENTER)
    wait(g, lambda d: not d.execute_script("return document.getElementById('name-dialog').open"))
    wait(g, lambda d: toast_text(d) == "Everyone you chat with now sees you as “Grace B. Hopper”.")
    assert g.execute_script("return JSON.parse(localStorage.getItem('parley.session')).user.displayName") == "Grace B. Hopper"
    assert call(server, ada, "GET", f"/v1/users/{grace['user']['id']}").json()["displayName"] == "Grace B. Hopper"

    # Ada's open page: the list, and Grace's line in the group, without a reload.
    wait(a, lambda d: "Grace B. Hopper" in d.execute_script(ROW_NAMES) and "Grace Hopper" not in d.execute_script(ROW_NAMES))
    wait(a, lambda d: d.execute_script(SENDERS).count("Grace B. Hopper") == 1 and "Grace Hopper" not in d.execute_script(SENDERS))
    assert a.execute_script("return window.__sameDocument === true"), "no reload"

    # Escape closes the dialog unchanged, and focus goes back to the menu's button.
    box = open_name_dialog(g)
    box.send_keys("zzz", Keys.ESCAPE)
    wait(g, lambda d: not d.execute_script("return document.getElementById('name-dialog').open"))
    assert g.execute_script("return document.activeElement.id") == "menu-button"
    assert call(server, grace, "GET", "/v1/me").json()["displayName"] == "Grace B. Hopper"


def test_a_name_changed_on_another_device_shows_in_the_direct_chat_header(server, browsers):
    ada, grace, alan, group = crew(server, "Book club")
    conversation = call(server, ada, "POST", "/v1/conversations", {"userId": grace["user"]["id"]}).json()["id"]
    a = open_chat(browsers, server, ada, conversation)
    wait(a, lambda d: by_id(d, "chat-name").text == "Grace Hopper")
    renamed = call(server, grace, "PATCH", "/v1/me", {"displayName": "Amazing Grace"})
    assert renamed.status_code == 200, renamed.text
    wait(a, lambda d: by_id(d, "chat-name").text == "Amazing Grace")
    wait(a, lambda d: "Amazing Grace" in d.execute_script(ROW_NAMES))


def test_a_rename_made_while_the_page_was_away_shows_when_it_is_back_and_look_alikes_are_marked(server, browsers):
    """Profile frames are not replayed: a page that reconnects takes the conversation list again, so a group's
    sender lines and the list show names changed meanwhile. And a member renamed to read like another
    ("Grace Hopper." beside "Grace Hopper") is told apart by username, live."""
    ada, grace, alan, group = crew(server, "Book club")
    for who, text in ((grace, "chapter one?"), (alan, "chapter two!")):
        assert call(server, who, "POST", "/v1/messages", {"clientId": str(uuid.uuid4()), "conversationId": group, "text": text}).status_code == 201
    a = open_chat(browsers, server, ada, group, script=SOCKET_SWITCH)
    wait(a, lambda d: d.execute_script(SENDERS) == ["Grace Hopper", "Alan Turing"])
    a.execute_script("window.__sameDocument = true")

    a.execute_script("window.__goOffline()")
    wait(a, lambda d: websocket_count(server.url) == 0)
    assert call(server, grace, "PATCH", "/v1/me", {"displayName": "Grace B. Hopper"}).status_code == 200
    a.execute_script("return window.__goOnline()")
    wait(a, lambda d: d.execute_script(SENDERS) == ["Grace B. Hopper", "Alan Turing"])
    wait(a, lambda d: "Grace B. Hopper" in d.execute_script(ROW_NAMES))

    # Alan takes Grace's new name with a dot: both are shown with their usernames, then unmarked again.
    assert call(server, alan, "PATCH", "/v1/me", {"displayName": "Grace B. Hopper."}).status_code == 200
    wait(a, lambda d: d.execute_script(SENDERS) == ["Grace B. Hopper (@grace)", "Grace B. Hopper. (@alan)"])
    assert call(server, alan, "PATCH", "/v1/me", {"displayName": "Alan Turing"}).status_code == 200
    wait(a, lambda d: d.execute_script(SENDERS) == ["Grace B. Hopper", "Alan Turing"])
    assert a.execute_script("return window.__sameDocument === true"), "no reload"


# The list read fails while sessionStorage says so (the stream and every other request go on).
FAILING_LIST = """
    const realFetch = window.fetch.bind(window);
    window.fetch = (input, init) => {
      const url = String(input?.url ?? input);
      if (sessionStorage.getItem('test.failList') && /\\/v1\\/conversations(\\?|$)/.test(url) && (init?.method ?? 'GET') === 'GET') {
        window.__listFailures = (window.__listFailures ?? 0) + 1;
        return Promise.resolve(new Response('{"error":{"code":"storage_unavailable","message":"Try again."}}',
          {status: 503, headers: {'Content-Type': 'application/json', 'Retry-After': '1'}}));
      }
      return realFetch(input, init);
    };"""


def test_a_reconnect_whose_list_read_fails_keeps_the_list_and_its_messages(server, browsers):
    ada, grace, alan, group = crew(server, "Book club")
    a = open_chat(browsers, server, ada, group, script=SOCKET_SWITCH + FAILING_LIST)
    wait(a, lambda d: "Book club" in d.execute_script(ROW_NAMES))
    a.execute_script("window.__goOffline()")
    wait(a, lambda d: websocket_count(server.url) == 0)
    assert call(server, grace, "POST", "/v1/messages", {"clientId": str(uuid.uuid4()), "conversationId": group, "text": "still here?"}).status_code == 201
    a.execute_script("sessionStorage.setItem('test.failList', '1')")
    a.execute_script("return window.__goOnline()")
    wait(a, lambda d: d.execute_script("return window.__listFailures ?? 0") >= 1)
    wait(a, lambda d: "Grace Hopper" in d.execute_script(SENDERS))  # the replay brought it
    assert not by_id(a, "list-error").is_displayed(), "the list shown stays, without an error"
    assert "Book club" in a.execute_script(ROW_NAMES)
