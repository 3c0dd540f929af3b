"""Measures the web client on a 10,000-message conversation: time to first render of the chat, DOM
size, and frame times while scrolling through everything. Figures go to docs/benchmarks.md.

Run from the repository root after building: python3 tests/e2e/chat_performance.py
"""
import pathlib
import subprocess
import sys
import tempfile
import uuid

import requests

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from conftest import BINARY, Server, sign_in  # noqa: E402
from screenshots import browser  # noqa: E402

MESSAGES = 10_000


class FastServer(Server):
    def start(self):  # the same server with the send limit lifted, to seed quickly
        self.process = subprocess.Popen(
            [BINARY, "serve", "--port", str(self.port), "--database", self.database, "--bcrypt-cost", "4",
             "--sends-per-second", "100000", "--logins-per-minute", "100000", "--log-level", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        super().wait_until_up()


OPEN_CHAT = """
const done = arguments[arguments.length - 1];
const start = performance.now();
location.hash = '#/c/' + arguments[0];
function check() {
  if (document.querySelectorAll('#message-list .bubble').length >= 50) {
    requestAnimationFrame(() => done({ firstRenderMs: performance.now() - start,
      domNodes: document.getElementsByTagName('*').length }));
  } else requestAnimationFrame(check);
}
check();
"""

SCROLL_ALL = """
const done = arguments[arguments.length - 1];
const scroller = document.getElementById('messages');
const frames = [];
let last = performance.now();
const startedAt = last;
let maxDom = 0;
function step(now) {
  frames.push(now - last); last = now;
  const rows = document.querySelectorAll('#message-list .bubble').length;
  maxDom = Math.max(maxDom, document.getElementsByTagName('*').length);
  // Done at the very first message (the list is windowed, so "all rows in the DOM" never happens).
  const first = document.querySelector('#message-list .bubble .text')?.textContent === 'message 1';
  if (first || now - startedAt > 240000) {
    frames.sort((a, b) => a - b);
    done({ rows, reachedFirst: first, maxDom, seconds: (now - startedAt) / 1000, domNodes: document.getElementsByTagName('*').length,
           frameP50: frames[Math.floor(frames.length * 0.5)], frameP95: frames[Math.floor(frames.length * 0.95)],
           frameMax: frames[frames.length - 1], frames: frames.length });
    return;
  }
  scroller.scrollTop = Math.max(0, scroller.scrollTop - 600);  // a fast reader flicking upwards
  requestAnimationFrame(step);
}
requestAnimationFrame(step);
"""


def main():
    with tempfile.TemporaryDirectory() as directory:
        server = FastServer(directory)
        server.start()
        try:
            alice, bob = server.register("alice", "Alice"), server.register("bob", "Bob")
            session = requests.Session()
            headers = {"Authorization": "Bearer " + alice["token"]}
            conversation = server.send(alice, "message 1", recipient=bob["user"]["id"])["conversationId"]
            for i in range(2, MESSAGES + 1):
                session.post(server.url + "/v1/messages", headers=headers, timeout=10, json={
                    "clientId": str(uuid.uuid4()), "conversationId": conversation, "text": f"message {i} " + "lorem ipsum " * (i % 7)
                }).raise_for_status()
            driver = browser(False, 1100, 760)
            driver.set_script_timeout(300)
            sign_in(driver, server, bob)
            driver.execute_script("return 1")
            import time
            time.sleep(1.0)
            opened = [driver.execute_async_script(OPEN_CHAT, conversation)]
            driver.get(server.url + "/")  # cold again, then measure a few more opens
            time.sleep(1.0)
            for _ in range(4):
                driver.execute_script("location.hash = ''")
                time.sleep(0.3)
                driver.execute_script("document.querySelector('#message-list').replaceChildren()")
                opened.append(driver.execute_async_script(OPEN_CHAT, conversation))
            scrolled = driver.execute_async_script(SCROLL_ALL)
            driver.quit()
        finally:
            server.stop()
    first = sorted(o["firstRenderMs"] for o in opened)
    print(f"first render of a chat (ms): {', '.join(f'{x:.0f}' for x in first)}; DOM nodes after open: {opened[0]['domNodes']}")
    print(f"scrolled to the first of {MESSAGES} messages (reached: {scrolled['reachedFirst']}) in {scrolled['seconds']:.1f} s; "
          f"rows in the DOM then: {scrolled['rows']}; DOM elements then: {scrolled['domNodes']}, at most: {scrolled['maxDom']}")
    print(f"frame times while scrolling: p50 {scrolled['frameP50']:.1f} ms, p95 {scrolled['frameP95']:.1f} ms, "
          f"max {scrolled['frameMax']:.1f} ms over {scrolled['frames']} frames")


if __name__ == "__main__":
    main()
