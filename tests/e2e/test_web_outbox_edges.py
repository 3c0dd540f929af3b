"""The web outbox at its edges (Public/js/store.js outbox rules, message-actions.js rule 4): an edit or
a delete of a message the server committed but never answered, and order kept when the rate limit
refuses a send. Timing is the test's: the page's socket is dropped right after its sends are written
(their answers are never read), and sends are held in the page (a gate) until the test lets them out."""
import json
import subprocess
import tempfile
import time
import uuid

import pytest
import requests
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import BINARY, ROOT, Server
from test_web_actions import SOCKET_SWITCH, headers, menu_open, open_chat, rows, send, two_people
from test_web_client import by_id, websocket_count
from test_web_groups import wait

# MARK: helpers

# SOCKET_SWITCH, plus a gate on `send` frames: while `__gate` is set they are held in `__held` (as if
# the network had not carried them yet) until the test lets them out; every frame received is kept.
GATE = SOCKET_SWITCH + """
    window.__held = [];
    window.__received = [];
    window.__gate = true;
    const GatedSocket = window.WebSocket;
    window.WebSocket = class extends GatedSocket {
      constructor(...args) {
        super(...args);
        const send = this.send;
        this.send = (data) => {
          if (window.__gate && String(data).includes('"type":"send"')) { window.__held.push([this, data]); return; }
          return send(data);
        };
        this.__realSend = (data) => send(data);
        this.addEventListener('message', (e) => { try { window.__received.push(JSON.parse(e.data)); } catch {} });
      }
    };
    window.__release = () => { const [socket, data] = window.__held.shift(); socket.__realSend(data); return JSON.parse(data); };
    window.__open = () => { window.__gate = false; while (window.__held.length) window.__release(); };"""


def outbox(driver, session):
    return json.loads(driver.execute_script("return localStorage.getItem('parley.outbox.' + arguments[0]) || '[]'", session["user"]["id"]))


def menu_on(driver, text, command):
    """Opens the menu of the row showing `text` (pending rows have no seq) and chooses `command`."""
    li = wait(driver, lambda d: d.execute_script("""return [...document.querySelectorAll('#message-list li.message')]
        .find(li => li.querySelector('.text').textContent === arguments[0])""", text))
    ActionChains(driver).move_to_element(li.find_element(By.CSS_SELECTOR, ".bubble")).perform()
    wait(driver, lambda d: li.find_element(By.CSS_SELECTOR, ".more-button").is_displayed())
    li.find_element(By.CSS_SELECTOR, ".more-button").click()
    wait(driver, menu_open)
    item = wait(driver, lambda d: next((b for b in d.find_elements(By.CSS_SELECTOR, "#message-menu [role=menuitem]")
                                        if (b.get_attribute("aria-label") or b.text) == command), None))
    item.click()


@pytest.fixture
def slow_server():
    """A server whose send limit refills one send every 8 s (after the usual burst of 60): far longer than a
    round trip takes even on a loaded machine."""
    with tempfile.TemporaryDirectory() as directory:
        server = Server(directory)
        server.process = subprocess.Popen(
            [BINARY, "serve", "--port", str(server.port), "--database", server.database, "--public-dir", str(ROOT / "Public"),
             "--bcrypt-cost", "4", "--sends-per-second", "0.125", "--logins-per-minute", "100000", "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        server.wait_until_up()
        yield server
        server.stop()


# MARK: tests

def send_and_drop(driver, text):
    """Writes a send to the socket and closes it in the same task: the server commits the send, the
    page never reads the answer."""
    driver.execute_script("""const box = document.getElementById('composer-input');
        box.value = arguments[0]; document.getElementById('composer').requestSubmit();
        window.__goOffline();""", text)


def test_an_edit_and_a_delete_of_messages_committed_but_never_answered_reach_everyone(server, browsers):
    alice, bob = two_people(server)
    conversation = send(server, alice, "Hello", recipient=bob["user"]["id"])["conversationId"]
    a = open_chat(browsers, server, alice, conversation, script=SOCKET_SWITCH)
    wait(a, lambda d: websocket_count(server.url) == 1)

    # An edit: the server has the message, the page has no answer (and no seq) for it.
    send_and_drop(a, "Meet at 5pm at the hotel lobyy")
    wait(a, lambda d: websocket_count(server.url) == 0)
    wait(a, lambda d: [m["text"] for m in server.history(bob, conversation)][-1] == "Meet at 5pm at the hotel lobyy")
    assert [e["text"] for e in outbox(a, alice)] == ["Meet at 5pm at the hotel lobyy"], "no answer came"
    menu_on(a, "Meet at 5pm at the hotel lobyy", "Edit")
    box = wait(a, lambda d: by_id(d, "composer-input").get_attribute("value") == "Meet at 5pm at the hotel lobyy" and by_id(d, "composer-input"))
    a.execute_script("arguments[0].value = ''", box)
    box.send_keys("Meet at 6pm at the hotel lobby" + Keys.ENTER)
    wait(a, lambda d: rows(d)[-1]["text"] == "Meet at 6pm at the hotel lobby")  # shown at once, offline
    assert [(e.get("action"), e["text"]) for e in outbox(a, alice)] == [(None, "Meet at 5pm at the hotel lobyy"), ("edit", "Meet at 6pm at the hotel lobby")], \
        "a sent message is not rewritten: the edit waits for its seq"
    a.execute_script("return window.__goOnline()")
    wait(a, lambda d: [(m["text"], bool(m.get("editedAt"))) for m in server.history(bob, conversation)][-1] == ("Meet at 6pm at the hotel lobby", True))
    wait(a, lambda d: outbox(d, alice) == [] and (r := rows(d)[-1])["text"] == "Meet at 6pm at the hotel lobby" and r["edited"])

    # A delete for everyone, with a reload (still offline) before coming back: the history read over
    # HTTP holds the message, and the queued delete applies to it there.
    send_and_drop(a, "my card PIN is 4321")
    wait(a, lambda d: websocket_count(server.url) == 0)
    wait(a, lambda d: [m["text"] for m in server.history(bob, conversation)][-1] == "my card PIN is 4321")
    menu_on(a, "my card PIN is 4321", "Delete…")
    wait(a, lambda d: by_id(d, "delete-for-everyone").is_displayed())
    by_id(a, "delete-for-everyone").click()
    wait(a, lambda d: rows(d)[-1]["deleted"])  # the tombstone at once, offline
    assert [e.get("action") for e in outbox(a, alice)] == [None, "delete"], "a sent message is not cancelled: the delete waits for its seq"
    a.refresh()
    wait(a, lambda d: (r := rows(d)) and len(r) == 3 and r[-2]["text"] == "Meet at 6pm at the hotel lobby" and r[-1]["deleted"])
    assert websocket_count(server.url) == 0 and a.execute_script("return window.__hellos.length") == 0, "still offline"

    a.execute_script("return window.__goOnline()")
    wait(a, lambda d: (m := server.history(bob, conversation)[-1]).get("deletedAt") and not m.get("text"))
    wait(a, lambda d: outbox(d, alice) == [] and rows(d)[-1]["deleted"])
    assert len(server.history(bob, conversation)) == 3, "each message stored once"


def test_a_send_the_rate_limit_refused_is_not_overtaken_by_the_ones_written_after_it(slow_server, browsers):
    server = slow_server
    alice, bob = two_people(server)
    carol = server.register("carol", "Carol")
    conversation = send(server, alice, "Hello", recipient=bob["user"]["id"])["conversationId"]
    a = open_chat(browsers, server, alice, conversation, script=GATE)
    wait(a, lambda d: websocket_count(server.url) == 1)
    a.execute_script("""const box = document.getElementById('composer-input'), form = document.getElementById('composer');
        for (const text of ['one', 'two', 'three']) { box.value = text; form.requestSubmit(); }""")
    wait(a, lambda d: len(outbox(d, alice)) == 3 and d.execute_script("return window.__held.length") >= 1)

    # Alice's other device uses up her sends: the next one is refused until a send refills (8 s).
    for _ in range(100):
        response = requests.post(server.url + "/v1/messages", json={"clientId": str(uuid.uuid4()), "text": "elsewhere",
                                 "recipientId": carol["user"]["id"]}, headers=headers(alice), timeout=10)
        if response.status_code == 429:
            break
        assert response.ok, response.text
    else:
        pytest.fail("the send limit never answered 429")
    exhausted = time.monotonic()
    first = a.execute_script("return window.__release()")
    assert first["text"] == "one"
    wait(a, lambda d: d.execute_script("""return window.__received.some(f => f.type === 'error' && f.clientId === arguments[0]
        && f.error.code === 'rate_limited')""", first["clientId"]))
    assert time.monotonic() - exhausted < 8, "refused before a send refilled"

    # One send has refilled: whatever the page has sent meanwhile goes now, and on from there.
    time.sleep(max(0, exhausted + 8.5 - time.monotonic()))
    a.execute_script("window.__open()")
    wait(a, lambda d: outbox(d, alice) == [], timeout=60)
    texts = [m["text"] for m in server.history(bob, conversation)]
    assert texts == ["Hello", "one", "two", "three"], "in the order written, each once"
    wait(a, lambda d: [r["text"] for r in rows(d)] == ["Hello", "one", "two", "three"])


def test_two_tabs_of_one_person_merge_their_outboxes_and_a_cancel_in_one_holds_in_the_other(server, browsers):
    alice, bob = two_people(server)
    conversation = send(server, alice, "Hello", recipient=bob["user"]["id"])["conversationId"]
    driver = open_chat(browsers, server, alice, conversation, script=SOCKET_SWITCH)
    tab_a = driver.current_window_handle
    driver.switch_to.new_window("tab")
    tab_b = driver.current_window_handle
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": SOCKET_SWITCH})
    driver.get(server.url + "/#/c/" + conversation)
    wait(driver, lambda d: websocket_count(server.url) == 2 and rows(d))

    def in_tab(tab):
        driver.switch_to.window(tab)
        return driver

    for tab in (tab_a, tab_b):
        in_tab(tab).execute_script("window.__goOffline()")
    wait(driver, lambda d: websocket_count(server.url) == 0)

    # Offline, each tab writes; each sees the other's at once (one saved outbox, merged).
    type_in(in_tab(tab_a), "from A")
    type_in(driver, "wrong chat: PIN 4321")
    wait(driver, lambda d: [e["text"] for e in outbox(d, alice)] == ["from A", "wrong chat: PIN 4321"])
    type_in(in_tab(tab_b), "from B")
    wait(driver, lambda d: [r["text"] for r in rows(d)] == ["Hello", "from A", "wrong chat: PIN 4321", "from B"])
    assert [e["text"] for e in outbox(driver, alice)] == ["from A", "wrong chat: PIN 4321", "from B"], "B's save kept A's entries"

    # Tab A cancels one (never sent) and edits another: tab B takes both changes in.
    in_tab(tab_a)
    wait(driver, lambda d: [r["text"] for r in rows(d)] == ["Hello", "from A", "wrong chat: PIN 4321", "from B"])
    menu_on(driver, "wrong chat: PIN 4321", "Delete…")
    wait(driver, lambda d: by_id(d, "delete-for-everyone").is_displayed())
    by_id(driver, "delete-for-everyone").click()
    menu_on(driver, "from A", "Edit")
    box = wait(driver, lambda d: by_id(d, "composer-input").get_attribute("value") == "from A" and by_id(d, "composer-input"))
    box.send_keys(", edited" + Keys.ENTER)
    wait(driver, lambda d: [e["text"] for e in outbox(d, alice)] == ["from A, edited", "from B"])
    wait(in_tab(tab_b), lambda d: [r["text"] for r in rows(d)] == ["Hello", "from A, edited", "from B"])

    # Both reload (a browser restart, still offline), then come back: each message arrives once, as it is now.
    for tab in (tab_a, tab_b):
        in_tab(tab).refresh()
        wait(driver, lambda d: [r["text"] for r in rows(d)] == ["Hello", "from A, edited", "from B"])
    assert websocket_count(server.url) == 0
    for tab in (tab_b, tab_a):
        in_tab(tab).execute_script("return window.__goOnline()")
    wait(driver, lambda d: [m["text"] for m in server.history(bob, conversation)] == ["Hello", "from A, edited", "from B"])
    for name, tab in (("A", tab_a), ("B", tab_b)):
        settled = lambda d: outbox(d, alice) == [] and [(r["text"], bool(r["seq"])) for r in rows(d)] \
            == [("Hello", True), ("from A, edited", True), ("from B", True)]
        try:
            wait(in_tab(tab), settled)
        except TimeoutException:
            pytest.fail(f"tab {name} never settled: outbox {outbox(driver, alice)}, rows {rows(driver)}, "
                        f"sockets {websocket_count(server.url)}, server {server.history(bob, conversation)}")
    assert [m["text"] for m in server.history(bob, conversation)] == ["Hello", "from A, edited", "from B"], "never the cancelled one"


def test_a_send_another_tab_confirmed_shows_when_a_save_here_finds_it_gone_before_the_storage_event(server, browsers):
    """Another tab's save can be read here before its storage event comes (a save of this tab runs in
    between): whichever finds the send gone reads the chat again, or the message vanishes from it."""
    alice, bob, conversation, driver = offline_chat(server, browsers)
    type_in(driver, "sent by the other tab")
    entry = wait(driver, lambda d: next(iter(outbox(d, alice)), None))

    # The other tab sends it and saves the outbox without it: written here as it lands, with no storage
    # event (a page gets none for its own writes), so only this page's next save can find it gone.
    response = requests.post(server.url + "/v1/messages", headers=headers(alice), timeout=10,
                             json={"clientId": entry["clientId"], "conversationId": conversation, "text": entry["text"]})
    assert response.ok, response.text
    driver.execute_script("""localStorage.setItem(arguments[0] + '.gone', JSON.stringify([arguments[1]]));
        localStorage.setItem(arguments[0], '[]')""", "parley.outbox." + alice["user"]["id"], entry["clientId"])
    type_in(driver, "written here")
    wait(driver, lambda d: [(r["text"], bool(r["seq"])) for r in rows(d)]
         == [("Hello", True), ("sent by the other tab", True), ("written here", False)])
    assert [e["text"] for e in outbox(driver, alice)] == ["written here"]


def test_a_cancelled_send_stays_cancelled_when_another_tab_saves_from_a_stale_read(server, browsers):
    """Tabs' storage catches up asynchronously: another tab can save an outbox read before my cancel
    landed there (the send still in it, its removal not listed). What this page saw removed stays
    removed, and its next save lists it again, so the cancelled message is never sent."""
    alice, bob, conversation, driver = offline_chat(server, browsers)
    type_in(driver, "wrong chat: PIN 4321")
    [entry] = wait(driver, lambda d: outbox(d, alice))
    menu_on(driver, "wrong chat: PIN 4321", "Delete…")
    wait(driver, lambda d: by_id(d, "delete-for-everyone").is_displayed())
    by_id(driver, "delete-for-everyone").click()
    wait(driver, lambda d: outbox(d, alice) == [])

    # The other tab's save, made from what it read before the cancel, lands with its storage event.
    key = "parley.outbox." + alice["user"]["id"]
    driver.execute_script("""localStorage.setItem(arguments[0] + '.gone', '[]'); localStorage.setItem(arguments[0], arguments[1]);
        window.dispatchEvent(new StorageEvent('storage', {key: arguments[0]}))""", key, json.dumps([entry]))
    assert outbox(driver, alice) == [], "saved back without the cancelled send"
    assert json.loads(driver.execute_script("return localStorage.getItem(arguments[0])", key + ".gone")) == [entry["clientId"]]
    type_in(driver, "the right one")
    driver.execute_script("return window.__goOnline()")
    wait(driver, lambda d: [(r["text"], bool(r["seq"])) for r in rows(d)] == [("Hello", True), ("the right one", True)])
    assert [m["text"] for m in server.history(bob, conversation)] == ["Hello", "the right one"]


def offline_chat(server, browsers):
    """Alice's chat with Bob ("Hello" sent), open in a page whose socket is switched off:
    (alice, bob, the conversation, the page)."""
    alice, bob = two_people(server)
    conversation = send(server, alice, "Hello", recipient=bob["user"]["id"])["conversationId"]
    driver = open_chat(browsers, server, alice, conversation, script=SOCKET_SWITCH)
    driver.execute_script("window.__goOffline()")
    wait(driver, lambda d: websocket_count(server.url) == 0)
    return alice, bob, conversation, driver


def type_in(driver, text):
    driver.execute_script("""const box = document.getElementById('composer-input'); box.value = arguments[0];
        box.dispatchEvent(new Event('input', {bubbles: true})); document.getElementById('composer').requestSubmit();""", text)
