"""Groups in the browser at the edges a hostile pass found: a reply quoting what a newcomer may not see
shows who wrote it and nothing of it, and a send that failed because I was out of the group says it
would go once I am back."""
import uuid

from test_web_actions import SOCKET_SWITCH, open_chat, rows
from test_web_client import type_and_send, websocket_count
from test_web_groups import befriend, call, create_group, people, wait


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
    remove = call(server, ada, "POST", f"/v1/conversations/{group}/members/{alan['user']['id']}/remove", {"clientId": str(uuid.uuid4())})
    assert remove.status_code == 201, remove.text
    l.execute_async_script("window.__goOnline().then(arguments[0])")
    error = lambda d: d.execute_script("return document.querySelector('#message-list li.mine .actions .error')?.textContent ?? null")
    wait(l, lambda d: error(d) == "You are no longer a member of this group.")
    added = call(server, ada, "POST", f"/v1/conversations/{group}/members", {"clientId": str(uuid.uuid4()), "userIds": [alan["user"]["id"]]})
    assert added.status_code == 201, added.text
    wait(l, lambda d: error(d) == "Not sent. You are in this group again: Retry sends it.")
    l.find_element("css selector", "#message-list li.mine .actions button.retry").click()
    wait(l, lambda d: "Queued while offline" in [m.get("text") for m in server.history(ada, group)])
    assert [m.get("text") for m in server.history(ada, group)].count("Queued while offline") == 1
