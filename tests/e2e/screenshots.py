"""Regenerates docs/screenshots/*.png: the list and chat views, light and dark, desktop and phone.
(Needs fonts-noto-cjk and fonts-noto-color-emoji for every script to render.)

Run from the repository root after building: python3 tests/e2e/screenshots.py
"""
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from conftest import ROOT, Server, sign_in  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

OUT = ROOT / "docs" / "screenshots"


def browser(dark, width, height):
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}", "--lang=en-US",
                     "--hide-scrollbars", "--force-device-scale-factor=1"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    driver.execute_cdp_cmd("Emulation.setFocusEmulationEnabled", {"enabled": True})
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 700})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
    return driver


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as directory:
        server = Server(directory)
        server.start()
        try:
            me = server.register("ada", "Ada Lovelace")
            grace = server.register("grace", "Grace Hopper")
            alan = server.register("alan", "Alan Turing")
            linus = server.register("linus", "Linus Torvalds")
            chat = server.send(grace, "Did the new compiler pass the tests?", recipient=me["user"]["id"])["conversationId"]
            server.send(me, "All green 🎉 — 90 tests, two browsers, one crash test.", conversation=chat)
            server.send(grace, "Nice. Ship it!\nAnd keep the outbox rules in the docs.", conversation=chat)
            server.send(me, "Already there. The next page loads when you scroll up.", conversation=chat)
            server.send(grace, "שלום! Works in any script: مرحبا, こんにちは 👋", conversation=chat)
            server.send(alan, "Can machines think?", recipient=me["user"]["id"])
            server.send(linus, "Talk is cheap. Show me the code.", recipient=me["user"]["id"])
            # Grace reads what Ada sent, so Ada's messages show blue ticks.
            import requests
            requests.post(f"{server.url}/v1/conversations/{chat}/receipts", json={"readSeq": 5},
                          headers={"Authorization": "Bearer " + grace["token"]}).raise_for_status()
            grace_online = browser(False, 800, 600)
            sign_in(grace_online, server, grace)
            for dark in (False, True):
                suffix = "dark" if dark else "light"
                for name, width, height in (("desktop", 1100, 720), ("phone", 390, 780)):
                    driver = browser(dark, width, height)
                    sign_in(driver, server, me)
                    time.sleep(1.0)
                    driver.save_screenshot(str(OUT / f"list-{name}-{suffix}.png"))
                    driver.get(server.url + "/#/c/" + chat)
                    time.sleep(1.2)
                    driver.save_screenshot(str(OUT / f"chat-{name}-{suffix}.png"))
                    driver.quit()
            grace_online.quit()
        finally:
            server.stop()
    print("wrote", sorted(p.name for p in OUT.glob("*.png")))


if __name__ == "__main__":
    main()
