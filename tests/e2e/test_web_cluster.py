"""The web client through a real load balancer (HAProxy) in front of two nodes on one PostgreSQL."""
import requests
from selenium.webdriver.common.by import By

from conftest import sign_in
from test_web_client import bubbles, by_id, list_rows, open_chat_by_search, statuses, type_and_send, wait


def on_different_nodes(cluster, a, b, session_b):
    """Reloads b until its WebSocket is on the other node than a's (HAProxy balances round robin).
    A page load makes the same number of connections each time, so a reload alone can land on the
    same node every time: a request of our own before every other attempt shifts the rotation."""
    for attempt in range(8):
        counts = cluster.live_connections()
        if sorted(counts) == [1, 1]:
            return counts
        if attempt % 2 == 1:
            requests.get(cluster.url + "/healthz", timeout=5, headers={"Connection": "close"})
        sign_in(b, cluster, session_b)
        wait(b, lambda d: sum(cluster.live_connections()) == 2)
    raise AssertionError(f"browsers never landed on different nodes: {cluster.live_connections()}")


def test_two_browsers_on_different_nodes_chat_through_the_load_balancer(cluster, browsers):
    alice, bob = cluster.register("alice", "Alice Liddell"), cluster.register("bob", "Bob Builder")
    a, b = browsers(), browsers()
    sign_in(a, cluster, alice)
    wait(a, lambda d: by_id(d, "list-empty").is_displayed())
    wait(a, lambda d: sum(cluster.live_connections()) == 1)
    sign_in(b, cluster, bob)
    wait(b, lambda d: by_id(d, "list-empty").is_displayed())
    wait(b, lambda d: sum(cluster.live_connections()) == 2)
    assert on_different_nodes(cluster, a, b, bob) == [1, 1]

    open_chat_by_search(a, "bui", "Bob Builder")
    type_and_send(a, "Hello across nodes")
    rows = wait(b, lambda d: (r := list_rows(d)) and r[0]["badge"] == "1" and r)
    assert rows[0]["preview"] == "Hello across nodes"
    wait(a, lambda d: statuses(d) == ["delivered"])

    b.find_element(By.CSS_SELECTOR, "#conversation-list button").click()
    wait(b, lambda d: bubbles(d) == ["Hello across nodes"])
    wait(a, lambda d: statuses(d) == ["read"])

    by_id(b, "composer-input").send_keys("Hi from the other node")
    wait(a, lambda d: by_id(d, "chat-status").text == "typing…")
    by_id(b, "composer-input").send_keys("!\n")
    wait(a, lambda d: bubbles(d) == ["Hello across nodes", "Hi from the other node!"])
    # Both have written: contacts, so presence crosses nodes too.
    wait(a, lambda d: by_id(d, "chat-status").text == "online")

