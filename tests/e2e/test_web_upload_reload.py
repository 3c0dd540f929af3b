"""Reloads in the middle of a file's upload (uploads.js rule 3): the page that comes back goes on with
the same upload (tus: HEAD its offset, PATCH the rest) and the message arrives exactly once.

The upload is kept twice: its id with the message in the outbox (localStorage) and its URL with the
file in IndexedDB, whose write puts the whole file down again (a 30 MB file: long enough for a reload
to land in between). A page reloaded in between used to go on from IndexedDB's URL and then send the
message without an uploadId: the server cannot read that frame, its error had nothing to match the
send by, and the message stayed "sending" for good, holding every later send of its chat.

Where the page is cut is chosen, not hoped for: a script in the page (CUT) lets the write of the
upload's URL to IndexedDB happen (or not) and then keeps its completion from the page, so nothing the
page would have done after it happens, as when the page is gone at that instant; then the test
reloads. The upload is throttled by Chrome's network emulation, as a slow uplink would; the first page's
creation is never answered, so the first reload comes while the file says "Preparing…"."""
import hashlib
import os

from selenium.webdriver.common.keys import Keys

from test_web_actions import open_chat
from test_web_client import by_id, type_and_send
from test_web_files import MIB, attach, attachments_of, last, link, outbox, served, tray, write
from test_web_groups import wait

CUT = """
    (() => {
      const pages = Number(sessionStorage.getItem('test.pages') ?? 0) + 1;
      sessionStorage.setItem('test.pages', String(pages));
      // 'kept': IndexedDB keeps the upload's URL; 'lost': it does not. Either way the page hears nothing more of it.
      const put = IDBObjectStore.prototype.put;
      IDBObjectStore.prototype.put = function (value) {
        const mode = sessionStorage.getItem('test.cut');
        if (!mode || Number(sessionStorage.getItem('test.cutAt')) !== pages || !value?.url || !value?.blob) return put.apply(this, arguments);
        sessionStorage.removeItem('test.cut');
        const request = mode === 'kept' ? put.apply(this, arguments) : undefined;
        this.transaction.addEventListener('complete', (event) => {
          event.stopImmediatePropagation();
          sessionStorage.setItem('test.cutDone', mode);
        });
        return request;
      };
      const realFetch = window.fetch.bind(window);
      window.fetch = (url, options = {}) => {
        if (String(url) === '/v1/uploads' && options.method === 'POST') {
          if (Number(sessionStorage.getItem('test.holdCreateAt')) === pages) return new Promise(() => {});  // never answered
          sessionStorage.setItem('test.creates', String(Number(sessionStorage.getItem('test.creates') ?? 0) + 1));
        }
        return realFetch(url, options);
      };
    })();"""

RECORDS = """const done = arguments[arguments.length - 1];
    const open = indexedDB.open('parley-uploads', 1);
    open.onsuccess = () => { const all = open.result.transaction('files', 'readonly').objectStore('files').getAll();
      all.onsuccess = () => done(all.result.map((r) => ({key: r.key, url: r.url ?? null}))); all.onerror = () => done('error'); };
    open.onerror = () => done('error');"""


def throttle(driver, bytes_per_second):
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.emulateNetworkConditions",
                           {"offline": False, "latency": 5, "downloadThroughput": -1, "uploadThroughput": bytes_per_second})


def session_value(driver, key):
    return driver.execute_script("return sessionStorage.getItem(arguments[0])", key)


def cut_on(driver, page, mode):
    """The write of the upload's URL on page `page` (1 = this one) is cut as `mode` says."""
    driver.execute_script("sessionStorage.setItem('test.cut', arguments[0]); sessionStorage.setItem('test.cutAt', arguments[1])",
                          mode, str(page))


def pages(driver):
    return int(session_value(driver, "test.pages"))


def reload(driver, bytes_per_second):
    driver.refresh()
    throttle(driver, bytes_per_second)


def chat(server, browsers):
    alice, bob = server.register("alice", "Alice Liddell"), server.register("bob", "Bob Builder")
    conversation = server.send(alice, "hi", recipient=bob["user"]["id"])["conversationId"]
    a = open_chat(browsers, server, alice, conversation, script=CUT)
    return alice, bob, conversation, a


def upload_shown(driver):
    """The pending message's upload as shown: its status text and bytes sent (None: indeterminate)."""
    message = last(driver)
    if not message or message["text"] != "the archive" or not message["uploads"]:
        return None
    return message["uploads"][0]


def arrives_once(server, browsers, alice, bob, conversation, a, data, creates=1):
    wait(a, lambda d: (m := last(d)) and m["text"] == "the archive" and m["seq"] and m["status"] != "sending", timeout=60)
    [message] = attachments_of(server, bob, conversation)
    attachment = message["attachments"][0]
    assert (message["text"], attachment["name"], attachment["size"]) == ("the archive", "archive.bin", len(data))
    assert hashlib.sha256(served(server, link(server, bob, attachment["id"])).content).digest() == hashlib.sha256(data).digest()
    assert int(session_value(a, "test.creates")) == creates, "the page went on with the upload it had, not a new one"
    wait(a, lambda d: outbox(d, alice) == [] and d.execute_async_script(RECORDS) == [])
    # Nothing holds the chat: a message after it goes at once.
    type_and_send(a, "and the notes")
    wait(a, lambda d: (m := last(d)) and m["text"] == "and the notes" and m["seq"] and m["status"] != "sending")
    assert [m["text"] for m in server.history(bob, conversation)] == ["hi", "the archive", "and the notes"]


def test_two_reloads_while_a_30_mb_file_goes_up_slowly_send_it_once(server, browsers, tmp_path):
    """The tester's sequence: Enter, a reload while the file says "Preparing…", a second one right
    after the next page created the upload (its URL kept in IndexedDB, the outbox not told), and a
    third halfway through the bytes."""
    alice, bob, conversation, a = chat(server, browsers)
    data = os.urandom(30 * MIB)
    throttle(a, 3 * MIB)
    attach(a, write(tmp_path, "archive.bin", data))
    wait(a, lambda d: len(tray(d)["items"]) == 1)
    a.execute_script("sessionStorage.setItem('test.holdCreateAt', arguments[0])", str(pages(a)))  # this page never gets past "Preparing…"
    by_id(a, "composer-input").send_keys("the archive" + Keys.ENTER)
    wait(a, lambda d: (u := upload_shown(d)) and u["status"] == "Preparing…")
    [entry] = outbox(a, alice)
    assert entry["uploading"] and not entry["attachments"][0].get("uploadId")

    cut_on(a, pages(a) + 1, "kept")  # the next page: cut right after IndexedDB keeps the upload's URL
    reload(a, 3 * MIB)
    wait(a, lambda d: session_value(d, "test.cutDone") == "kept", timeout=30)
    [record] = a.execute_async_script(RECORDS)
    assert record["url"], "IndexedDB has the upload"

    reload(a, 3 * MIB)
    shown = wait(a, lambda d: (u := upload_shown(d)) and (u["value"] or 0) >= 3 * MIB and u, timeout=30)
    reload(a, 6 * MIB)  # halfway: the next page asks where the server is and goes on from there
    resumed = wait(a, lambda d: (u := upload_shown(d)) and u["value"] and u, timeout=30)
    assert resumed["value"] >= shown["value"] - MIB, (shown, resumed)
    arrives_once(server, browsers, alice, bob, conversation, a, data)
    assert attachments_of(server, bob, conversation)[0]["clientId"] == entry["clientId"]


def test_a_reload_before_indexeddb_keeps_the_upload_goes_on_with_the_upload_the_outbox_names(server, browsers, tmp_path):
    """The other order: the outbox has the upload's id, IndexedDB never got its URL. The page that
    comes back finds the upload by its id (HEAD) rather than making a second one."""
    alice, bob, conversation, a = chat(server, browsers)
    data = os.urandom(4 * MIB + 321)
    throttle(a, 3 * MIB)
    cut_on(a, pages(a), "lost")
    attach(a, write(tmp_path, "archive.bin", data))
    wait(a, lambda d: len(tray(d)["items"]) == 1)
    by_id(a, "composer-input").send_keys("the archive" + Keys.ENTER)
    wait(a, lambda d: session_value(d, "test.cutDone") == "lost", timeout=30)
    assert [r["url"] for r in a.execute_async_script(RECORDS)] == [None]
    reload(a, 3 * MIB)
    arrives_once(server, browsers, alice, bob, conversation, a, data)
