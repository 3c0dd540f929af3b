"""Fixtures for the web client's end-to-end tests: a real `parley serve` and real headless Chromium."""
import os
import pathlib
import re
import socket
import subprocess
import tempfile
import time

import pytest
import requests
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

ROOT = pathlib.Path(__file__).resolve().parents[2]
BINARY = os.environ.get("PARLEY_BINARY", str(ROOT / ".build" / "debug" / "parley"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`parley serve` on a fixed loopback port and database, so it can be stopped and started again."""

    def __init__(self, directory):
        self.port = free_port()
        self.database = os.path.join(directory, "web.sqlite")
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [BINARY, "serve", "--port", str(self.port), "--database", self.database, "--public-dir", str(ROOT / "Public"),
             "--bcrypt-cost", "4", "--sends-per-second", "1000", "--logins-per-minute", "100000", "--log-level", "warning",
             "--push-allow-loopback", "--uploads-per-minute", "100000", "--upload-quota-bytes", str(1 << 40)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait_until_up()

    def wait_until_up(self):
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if requests.get(self.url + "/healthz", timeout=1).ok:
                    return
            except requests.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("parley serve did not start")

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=30)
            self.process = None

    def register(self, username, display_name, password="password123"):
        response = requests.post(self.url + "/v1/auth/register",
                                 json={"username": username, "displayName": display_name, "password": password}, timeout=10)
        response.raise_for_status()
        return response.json()

    def rest(self, session, method, path, body=None):
        response = requests.request(method, self.url + path, json=body, timeout=10,
                                    headers={"Authorization": "Bearer " + session["token"]})
        return response

    def notification_settings(self, session):
        response = self.rest(session, "GET", "/v1/notifications")
        response.raise_for_status()
        return response.json()

    def setting_of(self, session, conversation):
        found = [c for c in self.notification_settings(session)["conversations"] if c["conversationId"] == conversation]
        return found[0] if found else {"conversationId": conversation, "level": "all", "mutedUntil": None}

    def session_status(self, session):
        return requests.get(f"{self.url}/v1/me", headers={"Authorization": "Bearer " + session["token"]}, timeout=10).status_code

    def conversations(self, session):
        response = requests.get(f"{self.url}/v1/conversations?limit=100", headers={"Authorization": "Bearer " + session["token"]}, timeout=10)
        response.raise_for_status()
        return response.json()["conversations"]

    def history(self, session, conversation):
        response = requests.get(f"{self.url}/v1/conversations/{conversation}/messages?limit=200",
                                headers={"Authorization": "Bearer " + session["token"]}, timeout=10)
        response.raise_for_status()
        return response.json()["messages"]

    def send(self, session, text, recipient=None, conversation=None):
        import uuid
        body = {"clientId": str(uuid.uuid4()), "text": text}
        body["conversationId" if conversation else "recipientId"] = conversation or recipient
        response = requests.post(self.url + "/v1/messages", json=body,
                                 headers={"Authorization": "Bearer " + session["token"]}, timeout=10)
        response.raise_for_status()
        return response.json()["message"]


@pytest.fixture
def server():
    with tempfile.TemporaryDirectory() as directory:
        server = Server(directory)
        server.start()
        yield server
        server.stop()


class Cluster(Server):
    """`scripts/cluster`: PostgreSQL, two `parley serve` nodes and HAProxy in front; `url` is HAProxy's."""

    def __init__(self, directory, nodes=2, restart=False):
        self.restart = restart
        self.port = free_port_block(nodes + 2)
        self.url = f"http://127.0.0.1:{self.port}"
        self.node_urls = [f"http://127.0.0.1:{self.port + i}" for i in range(1, nodes + 1)]
        self.directory = directory
        self.nodes = nodes
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [str(ROOT / "scripts" / "cluster"), "--nodes", str(self.nodes), "--port", str(self.port), "--binary", BINARY,
             "--dir", self.directory] + (["--restart"] if self.restart else []), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        line = self.process.stdout.readline()
        if not line.startswith("Parley cluster:"):
            raise RuntimeError(f"scripts/cluster did not start: {line!r}")
        self.wait_until_up()

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=60)
            self.process = None

    def node_pid(self, number):
        """The process id of node `number` (from 1), as `scripts/cluster` writes it."""
        return int(pathlib.Path(self.directory, f"node{number}.pid").read_text())

    def live_connections(self):
        """WebSockets open on each node, from the nodes' own /metrics (answered on loopback)."""
        counts = []
        for url in self.node_urls:
            text = requests.get(url + "/metrics", timeout=5).text
            match = re.search(r"^parley_websocket_connections(?:\{[^}]*\})? ([0-9.]+)$", text, re.M)
            counts.append(int(float(match.group(1))) if match else 0)
        return counts


def free_port_block(size):
    """The first of `size` consecutive free loopback ports."""
    for _ in range(50):
        start = free_port()
        if start + size >= 65535:
            continue
        try:
            sockets = []
            for port in range(start, start + size):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return start
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no block of free ports")


@pytest.fixture
def cluster():
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o755)
        cluster = Cluster(directory)
        cluster.start()
        yield cluster
        cluster.stop()


@pytest.fixture
def browsers():
    """Opens headless Chromium windows on demand; `browsers(dark=True, width=…)`."""
    opened = []

    def open_browser(dark=False, width=1100, height=760):
        options = Options()
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}",
                         "--disable-gpu", "--lang=en-US"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))
        driver.implicitly_wait(0)
        if width < 500:  # headless Chromium's windows are at least 500 px wide: a phone's width is emulated
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        # Headless windows are never "focused"; emulate focus as a person looking at the tab would give.
        driver.execute_cdp_cmd("Emulation.setFocusEmulationEnabled", {"enabled": True})
        if dark:
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        opened.append(driver)
        return driver

    yield open_browser
    for driver in opened:
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and "WebSocket" not in e["message"]
                  and "Failed to load resource" not in e["message"]]
        driver.quit()
        assert not errors, f"browser console errors: {errors}"


def sign_in(driver, server, session):
    """Opens the app already signed in (the session as the login form would have stored it)."""
    driver.get(server.url + "/favicon.svg")
    driver.execute_script("localStorage.setItem('parley.session', arguments[0])",
                          __import__("json").dumps({"token": session["token"], "user": session["user"]}))
    driver.get(server.url + "/")


def page_problems(driver, label, tmp_path):
    """What a page as shown breaks: axe's serious and critical findings, and a sideways scroll (asserted
    at once). A screenshot is kept in `tmp_path` for whoever reads a failure."""
    from axe_selenium_python import Axe

    axe = Axe(driver)
    axe.inject()
    problems = [
        f"{label}: {v['id']} {[n['target'] for n in v['nodes'][:3]]}"
        for v in axe.run()["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    driver.save_screenshot(str(tmp_path / f"{label.replace(' ', '-')}.png"))
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth"), f"{label}: sideways scroll"
    return problems
