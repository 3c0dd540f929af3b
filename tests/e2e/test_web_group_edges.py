"""Groups in the browser at the edges a hostile pass found: a reply quoting what a newcomer may not see
shows who wrote it and nothing of it, a send that failed because I was out of the group says it
would go once I am back (and offers no Retry before), and the history shared with me when I am
re-added shows at once, in the chat open or opened later, as a reload would show it."""
import uuid

from selenium.webdriver.common.by import By

from test_web_actions import SOCKET_SWITCH, open_chat, rows
from test_web_client import by_id, type_and_send, websocket_count
from test_web_groups import befriend, call, create_group, crew, people, row, row_info, wait


def remove(server, admin, group, member):
    response = call(server, admin, "POST", f"/v1/conversations/{group}/members/{member['user']['id']}/remove", {"clientId": str(uuid.uuid4())})
    assert response.status_code == 201, response.text


def add(server, admin, group, member, share_history=False):
    response = call(server, admin, "POST", f"/v1/conversations/{group}/members",
                    {"clientId": str(uuid.uuid4()), "userIds": [member["user"]["id"]], "shareHistory": share_history})
    assert response.status_code == 201, response.text


def seqs(driver):
    """The seq of every row the chat shows, messages and membership entries, top to bottom."""
    return driver.execute_script("return [...document.querySelectorAll('#message-list li[data-seq]')].map(li => Number(li.dataset.seq))")


def failed_buttons(driver):
    return driver.execute_script("return [...document.querySelectorAll('#message-list li.mine .actions button')].map(b => b.textContent)")


def test_a_quote_of_what_a_newcomer_may_not_see_names_its_writer_only(server, browsers):
    ada, grace, alan = people(server, "ada", "grace", "alan")
    befriend(server, ada, grace)
    befriend(server, ada, alan)
    group = create_group(server, ada, "Plans", [grace])
    early = server.send(grace, "The early secret: meet at 5", conversation=group)
    response = call(server, ada, "POST", f"/v1/conversations/{group}/members",
                    {"clientId": str(uuid.uuid4()), "userIds": [alan["user"]["id"]]})
    assert response.status_code == 201, response.text
    reply = call(server, ada, "POST", "/v1/messages",
                 {"clientId": str(uuid.uuid4()), "conversationId": group, "text": "About that", "replyToSeq": early["seq"]})
    assert reply.status_code == 201, reply.text
    assert reply.json()["message"]["replyTo"]["preview"] == "The early secret: meet at 5", "its writer sees the quote"
    l = open_chat(browsers, server, alan, group, width=390)
    g = open_chat(browsers, server, grace, group)
    wait(l, lambda d: any(r["text"] == "About that" for r in rows(d)))
    answer = next(r for r in rows(l) if r["text"] == "About that")
    assert answer["quote"] == {"name": "Grace Hopper", "text": "Earlier message"}, answer
    assert "meet at 5" not in l.page_source
    quote = l.find_element("css selector", "#message-list li.message .quote")
    assert quote.get_attribute("aria-disabled") == "true", "nothing to go to"
    wait(g, lambda d: any(r["text"] == "About that" for r in rows(d)))
    assert next(r for r in rows(g) if r["text"] == "About that")["quote"]["text"] == "The early secret: meet at 5"


def test_a_send_refused_while_i_was_out_of_the_group_says_retry_works_once_i_am_back(server, browsers):
    ada, alan = people(server, "ada", "alan")
    befriend(server, ada, alan)
    group = create_group(server, ada, "Plans", [alan])
    server.send(ada, "Welcome", conversation=group)
    l = open_chat(browsers, server, alan, group, script=SOCKET_SWITCH)
    wait(l, lambda d: websocket_count(server.url) == 1)
    l.execute_script("window.__goOffline()")
    wait(l, lambda d: websocket_count(server.url) == 0)
    type_and_send(l, "Queued while offline")
    remove(server, ada, group, alan)
    l.execute_async_script("window.__goOnline().then(arguments[0])")
    error = lambda d: d.execute_script("return document.querySelector('#message-list li.mine .actions .error')?.textContent ?? null")
    wait(l, lambda d: error(d) == "You are no longer a member of this group.")
    assert failed_buttons(l) == ["Delete"], "out of the group a retry could only be refused again"
    # The list says so too (a send may fail while its chat is not open, or the page was closed).
    wait(l, lambda d: ", 1 message not sent" in row(d, "Plans").find_element(By.CSS_SELECTOR, "button").get_attribute("aria-label"))
    assert row(l, "Plans").find_element(By.CSS_SELECTOR, ".badge.not-sent").text == "!"
    add(server, ada, group, alan)
    wait(l, lambda d: error(d) == "Not sent. You are in this group again: Retry sends it.")
    assert failed_buttons(l) == ["Retry", "Delete"]
    # Out again: the server's reason again (it said "in this group again" until a reload and after).
    remove(server, ada, group, alan)
    wait(l, lambda d: error(d) == "You are no longer a member of this group.")
    assert failed_buttons(l) == ["Delete"]
    l.refresh()
    wait(l, lambda d: error(d) == "You are no longer a member of this group.")
    add(server, ada, group, alan)
    wait(l, lambda d: error(d) == "Not sent. You are in this group again: Retry sends it.")
    l.find_element("css selector", "#message-list li.mine .actions button.retry").click()
    wait(l, lambda d: "Queued while offline" in [m.get("text") for m in server.history(ada, group)])
    wait(l, lambda d: not row(d, "Plans").find_elements(By.CSS_SELECTOR, ".badge.not-sent"))
    assert [m.get("text") for m in server.history(ada, group)].count("Queued while offline") == 1


def alan_reading_plans(server, browsers):
    """Ada's group "Plans" with Grace and Alan; Grace wrote "Before the break"; Alan's browser shows it."""
    ada, grace, alan, group = crew(server, "Plans")
    server.send(grace, "Before the break", conversation=group)
    l = open_chat(browsers, server, alan, group)
    wait(l, lambda d: [r["text"] for r in rows(d)] == ["Before the break"])
    return ada, grace, alan, group, l


def test_re_added_with_shared_history_my_open_chat_shows_what_was_written_while_i_was_out(server, browsers):
    ada, grace, alan, group, l = alan_reading_plans(server, browsers)
    remove(server, ada, group, alan)
    wait(l, lambda d: by_id(d, "left-notice").is_displayed())
    for index in range(3):
        server.send(grace, f"While Alan was out {index}", conversation=group)
    add(server, ada, group, alan, share_history=True)

    texts = ["Before the break"] + [f"While Alan was out {index}" for index in range(3)]
    wait(l, lambda d: [r["text"] for r in rows(d)] == texts)
    wait(l, lambda d: by_id(d, "composer").is_displayed())
    server.send(grace, "Welcome back", conversation=group)
    wait(l, lambda d: [r["text"] for r in rows(d)] == texts + ["Welcome back"])
    # In order, once each, nothing missing: every row Alan may see now, entries included.
    everything = [m["seq"] for m in server.history(alan, group)]
    assert seqs(l) == everything
    l.refresh()
    wait(l, lambda d: [r["text"] for r in rows(d)] == texts + ["Welcome back"])
    assert seqs(l) == everything, "what a reload shows"


def test_re_added_with_shared_history_while_on_the_list_the_chat_opens_with_all_of_it(server, browsers):
    ada, grace, alan, group, l = alan_reading_plans(server, browsers)
    l.execute_script("location.hash = ''")  # back to the list: the chat's thread stays loaded
    wait(l, lambda d: not by_id(d, "chat").is_displayed())
    remove(server, ada, group, alan)
    for index in range(60):  # more than a page of history (50)
        server.send(grace, f"While Alan was out {index}", conversation=group)
    add(server, ada, group, alan, share_history=True)
    wait(l, lambda d: "added" in (row_info(d, "Plans") or {}).get("preview", ""))

    row(l, "Plans").find_element(By.TAG_NAME, "button").click()
    wait(l, lambda d: "While Alan was out 59" in [r["text"] for r in rows(d)])
    everything = [m["seq"] for m in server.history(alan, group)]
    # The newest page, with no hole in it; scrolling up reads the rest, up to the first message.
    shown = seqs(l)
    assert len(shown) >= 50 and shown == everything[-len(shown):], shown
    for _ in range(20):
        if seqs(l) == everything:
            break
        l.execute_script("document.getElementById('messages').scrollTop = 0")
        wait(l, lambda d: not by_id(d, "older-loading").is_displayed())
    assert seqs(l) == everything
