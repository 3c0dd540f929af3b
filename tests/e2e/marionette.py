"""Firefox under test without geckodriver (Debian has none): a minimal client of Marionette, the
remote protocol Firefox has built in, and a launcher for headless Firefox ESR with a throwaway profile.

Marionette is TCP on loopback: each message is `<length>:<json>`; a command is
`[0, id, "WebDriver:Name", {params}]` and its answer `[1, id, error|null, result|null]`. The
commands are WebDriver's (https://w3c.github.io/webdriver/), under their Marionette names.
"""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"

# What a test profile needs: nothing reaches beyond loopback (every non-loopback request goes to a
# dead proxy on loopback), no first-run or update noise, and Marionette on a port we chose.
QUIET_PREFS = {
    "network.proxy.type": 1,
    "network.proxy.http": "127.0.0.1",
    "network.proxy.http_port": 9,
    "network.proxy.ssl": "127.0.0.1",
    "network.proxy.ssl_port": 9,
    "network.proxy.socks_remote_dns": True,
    "network.proxy.no_proxies_on": "",
    "network.proxy.allow_hijacking_localhost": False,  # loopback goes direct
    "network.trr.mode": 5,
    "network.dns.disablePrefetch": True,
    "network.prefetch-next": False,
    "network.http.speculative-parallel-limit": 0,
    "network.captive-portal-service.enabled": False,
    "network.connectivity-service.enabled": False,
    "network.manage-offline-status": False,
    "app.normandy.enabled": False,
    "app.normandy.api_url": "",
    "app.update.disabledForTesting": True,
    "app.update.auto": False,
    "browser.safebrowsing.blockedURIs.enabled": False,
    "browser.safebrowsing.downloads.enabled": False,
    "browser.safebrowsing.malware.enabled": False,
    "browser.safebrowsing.phishing.enabled": False,
    "browser.safebrowsing.provider.mozilla.updateURL": "",
    "browser.search.update": False,
    "browser.region.network.url": "",
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "browser.newtabpage.enabled": False,
    "browser.aboutwelcome.enabled": False,
    "browser.sessionstore.resume_from_crash": False,
    "browser.tabs.warnOnClose": False,
    "browser.warnOnQuit": False,
    "browser.topsites.contile.enabled": False,
    "browser.urlbar.suggest.searches": False,
    "datareporting.policy.dataSubmissionEnabled": False,
    "datareporting.healthreport.uploadEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "toolkit.telemetry.server": "",
    "toolkit.startup.max_resumed_crashes": -1,
    "extensions.update.enabled": False,
    "extensions.getAddons.cache.enabled": False,
    "extensions.systemAddon.update.enabled": False,
    "services.settings.server": "data:,#remote-settings-dummy/v1",
    "security.remote_settings.intermediates.enabled": False,
    "security.OCSP.enabled": 0,
    "geo.provider.network.url": "",
    "identity.fxaccounts.enabled": False,
    "media.gmp-manager.url": "",
    "privacy.trackingprotection.enabled": False,
    "remote.prefs.recommended": True,
    "dom.ipc.reportProcessHangs": False,
}


class MarionetteError(Exception):
    def __init__(self, error):
        self.error = error.get("error")
        self.message = error.get("message")
        self.stacktrace = error.get("stacktrace")
        super().__init__(f"{self.error}: {self.message}")


class Marionette:
    """One Marionette connection and its WebDriver session."""

    def __init__(self, port, host="127.0.0.1", timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock = socket.create_connection((host, port), timeout=5)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.sock.settimeout(None)
        self.buffer = b""
        self.last_id = 0
        self.hello = self._read()  # {"applicationType": "gecko", "marionetteProtocol": 3}
        if self.hello.get("marionetteProtocol") != 3:
            raise RuntimeError(f"unexpected Marionette greeting {self.hello}")
        self.session = None

    def _read(self):
        while b":" not in self.buffer:
            self._fill()
        length, _, rest = self.buffer.partition(b":")
        length = int(length)
        self.buffer = rest
        while len(self.buffer) < length:
            self._fill()
        message, self.buffer = self.buffer[:length], self.buffer[length:]
        return json.loads(message)

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("Marionette closed the connection")
        self.buffer += data

    def send(self, name, params=None):
        self.last_id += 1
        data = json.dumps([0, self.last_id, name, params or {}]).encode()
        self.sock.sendall(str(len(data)).encode() + b":" + data)
        while True:
            message = self._read()
            if message[0] == 1 and message[1] == self.last_id:
                _, _, error, result = message
                if error:
                    raise MarionetteError(error)
                return result

    # MARK: WebDriver, the few commands the tests use

    def new_session(self, capabilities=None):
        self.session = self.send("WebDriver:NewSession", capabilities or {"strictFileInteractability": True})
        return self.session

    def set_timeouts(self, script=None, page_load=None, implicit=None):
        timeouts = {k: v for k, v in (("script", script), ("pageLoad", page_load), ("implicit", implicit)) if v is not None}
        self.send("WebDriver:SetTimeouts", timeouts)

    def navigate(self, url):
        self.send("WebDriver:Navigate", {"url": url})

    @property
    def url(self):
        return self.send("WebDriver:GetCurrentURL")["value"]

    def execute(self, script, *args):
        """Runs `script` as a function body (`arguments` are `args`); returns its return value."""
        return self.send("WebDriver:ExecuteScript", {"script": script, "args": list(args)})["value"]

    def execute_async(self, script, *args):
        """Runs `script`; it calls `arguments[arguments.length - 1](value)` to finish with `value`."""
        return self.send("WebDriver:ExecuteAsyncScript", {"script": script, "args": list(args)})["value"]

    def run_promise(self, body, *args):
        """Runs an async function body and returns what it resolves with; a rejection is raised."""
        result = self.execute_async(
            "const done = arguments[arguments.length - 1];"
            f"(async (...args) => {{ {body} }})(...Array.from(arguments).slice(0, -1))"
            ".then(value => done({ok: true, value}), error => done({ok: false, error: String(error && error.stack || error)}));",
            *args)
        if not result["ok"]:
            raise MarionetteError({"error": "javascript error", "message": result["error"]})
        return result["value"]

    def find(self, css):
        return self.send("WebDriver:FindElement", {"using": "css selector", "value": css})["value"][ELEMENT]

    def find_all(self, css):
        return [e[ELEMENT] for e in self.send("WebDriver:FindElements", {"using": "css selector", "value": css})]

    def click(self, element):
        self.send("WebDriver:ElementClick", {"id": element})

    def accessible_name(self, element):
        return self.send("WebDriver:GetComputedLabel", {"id": element})["value"]

    def text(self, element):
        return self.send("WebDriver:GetElementText", {"id": element})["value"]

    def window_handles(self):
        return self.send("WebDriver:GetWindowHandles")

    def window_handle(self):
        return self.send("WebDriver:GetWindowHandle")["value"]

    def new_tab(self):
        """Opens a tab and switches to it; returns its handle."""
        handle = self.send("WebDriver:NewWindow", {"type": "tab"})["handle"]
        self.switch_to(handle)
        return handle

    def switch_to(self, handle):
        self.send("WebDriver:SwitchToWindow", {"handle": handle, "focus": True})

    def close_window(self):
        return self.send("WebDriver:CloseWindow")

    def set_context(self, context):
        """"chrome" runs scripts with the browser's privileges; "content" (the default) in the page."""
        self.send("Marionette:SetContext", {"value": context})

    def quit(self):
        try:
            self.send("Marionette:Quit", {"flags": ["eForceQuit"]})
        except (OSError, ConnectionError, MarionetteError):
            pass
        finally:
            self.sock.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def firefox_binary():
    for name in (os.environ.get("FIREFOX"), "firefox-esr", "firefox"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def pref_line(name, value):
    return f"user_pref({json.dumps(name)}, {json.dumps(value)});\n"


class Firefox:
    """Headless Firefox with a fresh profile holding `prefs`, driven over Marionette (`.driver`)."""

    def __init__(self, prefs=None, binary=None, profile_dir=None):
        self.binary = binary or firefox_binary()
        if not self.binary:
            raise RuntimeError("no firefox-esr or firefox on PATH (scripts/test installs firefox-esr)")
        self._own_profile = profile_dir is None
        self.profile = pathlib.Path(profile_dir or tempfile.mkdtemp(prefix="parley-firefox-"))
        self.port = free_port()
        all_prefs = dict(QUIET_PREFS)
        all_prefs.update(prefs or {})
        all_prefs["marionette.port"] = self.port
        with open(self.profile / "user.js", "w") as f:
            f.writelines(pref_line(k, v) for k, v in all_prefs.items())
        self.log = open(self.profile / "firefox.log", "w")
        env = dict(os.environ, MOZ_HEADLESS="1", MOZ_CRASHREPORTER_DISABLE="1", MOZ_DISABLE_AUTO_SAFE_MODE="1")
        self.process = subprocess.Popen(
            [self.binary, "--headless", "--marionette", "-remote-allow-system-access", "--no-remote", "--new-instance",
             "--profile", str(self.profile), "about:blank"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            self.driver = Marionette(self.port, timeout=90)
            self.driver.new_session()
            self.driver.set_timeouts(script=30000, page_load=30000)
        except Exception:
            self.close()
            raise

    def log_text(self):
        self.log.flush()
        return (self.profile / "firefox.log").read_text(errors="replace")

    def close(self):
        driver = getattr(self, "driver", None)
        if driver is not None:
            driver.quit()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)  # its own session: the content processes too
            self.process.wait(timeout=10)
        self.log.close()
        if self._own_profile:
            shutil.rmtree(self.profile, ignore_errors=True)
