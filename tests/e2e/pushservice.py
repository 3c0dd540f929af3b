"""A Web Push service on loopback for the push tests, with the two faces a real one has.

- The application server's side (RFC 8030): `POST /push/<id>` takes a push. Each request is kept
  (`PushRequest`: headers, body, the answer given) and checked as a push service would check it:
  `Content-Encoding: aes128gcm`, a `TTL`, a well-formed `Topic`, and a VAPID `Authorization`
  (RFC 8292: `vapid t=<JWT>, k=<key>`, the JWT signed ES256 by `k`, `aud` the endpoint's origin,
  `exp` in the future and at most 24 h away, a `mailto:`/`https:` `sub`). What fails a check is
  answered 400/401 and listed in `problems`. The answer can be forced: `respond(endpoint, 410)`,
  `respond_next(3, 503)`, or the whole service taken `down()` (its port closes) and `up()` again.
- The browser's side (autopush.py): Mozilla's autopush WebSocket protocol, which Firefox speaks when
  `dom.push.serverURL` names `ws_url` (hello/register/unregister/ack/ping, and `notification`
  frames carrying the encrypted body). A push to a browser's channel is kept until the browser
  acks it, sent at once when the browser is connected and again when it says hello, the newest of
  a `Topic` replacing an older one not yet delivered, as autopush does.

`subscribe()` makes a subscription whose keys the test holds (a P-256 pair and an auth secret):
its pushes are decrypted (RFC 8291, `http_ece`) and their JSON is `PushRequest.payload`.
Every wait is a gate: `wait_for(predicate)` wakes on each change and fails at a deadline.
"""
import asyncio
import json
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional
from urllib.parse import urlsplit

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from autopush import AutopushSide, b64url, unb64url

MAX_VAPID_LIFETIME = 24 * 3600


def public_bytes(key) -> bytes:
    """A P-256 public key (or a private key's public half), uncompressed: 65 bytes."""
    if isinstance(key, ec.EllipticCurvePrivateKey):
        key = key.public_key()
    return key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


# MARK: VAPID (RFC 8292)

def vapid_authorization(private_key, audience, subject="mailto:tests@parley.invalid", lifetime=12 * 3600):
    """An `Authorization` header value as an application server makes it (for the tests' own pushes)."""
    header = b64url(json.dumps({"typ": "JWT", "alg": "ES256"}).encode())
    claims = b64url(json.dumps({"aud": audience, "exp": int(time.time()) + lifetime, "sub": subject}).encode())
    signing_input = f"{header}.{claims}".encode()
    r, s = decode_dss_signature(private_key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
    signature = b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
    return f"vapid t={header}.{claims}.{signature}, k={b64url(public_bytes(private_key))}"


def check_vapid(authorization, audience, now=None):
    """Checks a VAPID `Authorization` as a push service does. Returns (claims, k bytes); raises
    ValueError saying what is wrong."""
    now = time.time() if now is None else now
    if not authorization:
        raise ValueError("no Authorization header")
    scheme, _, rest = authorization.strip().partition(" ")
    if scheme.lower() != "vapid":
        raise ValueError(f"Authorization scheme is {scheme!r}, not vapid")
    params = {}
    for part in rest.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep:
            raise ValueError(f"malformed Authorization parameter {part!r}")
        params[name.strip().lower()] = value.strip()
    if "t" not in params or "k" not in params:
        raise ValueError(f"Authorization lacks t= or k=: {authorization!r}")
    try:
        key_bytes = unb64url(params["k"])
        key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key_bytes)
    except Exception as error:  # noqa: BLE001 - any decoding failure is the same finding
        raise ValueError(f"k= is not a P-256 public key: {error}") from None
    if len(key_bytes) != 65:
        raise ValueError(f"k= is {len(key_bytes)} bytes, not an uncompressed point (65)")
    pieces = params["t"].split(".")
    if len(pieces) != 3:
        raise ValueError("t= is not a JWS compact serialization")
    try:
        header = json.loads(unb64url(pieces[0]))
        claims = json.loads(unb64url(pieces[1]))
        signature = unb64url(pieces[2])
    except Exception as error:  # noqa: BLE001
        raise ValueError(f"t= does not decode: {error}") from None
    if header.get("alg") != "ES256":
        raise ValueError(f"JWT alg is {header.get('alg')!r}, not ES256")
    if header.get("typ", "JWT") != "JWT":
        raise ValueError(f"JWT typ is {header.get('typ')!r}")
    if len(signature) != 64:
        raise ValueError(f"JWT signature is {len(signature)} bytes, not the 64 of ES256 (r||s)")
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        key.verify(der, f"{pieces[0]}.{pieces[1]}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ValueError("JWT signature does not verify with k=") from None
    if claims.get("aud") != audience:
        raise ValueError(f"JWT aud is {claims.get('aud')!r}, expected {audience!r}")
    exp = claims.get("exp")
    if not isinstance(exp, int) or isinstance(exp, bool):
        raise ValueError(f"JWT exp is {exp!r}, not an integer")
    if exp <= now:
        raise ValueError(f"JWT expired: exp {exp} <= now {int(now)}")
    if exp > now + MAX_VAPID_LIFETIME + 5:
        raise ValueError(f"JWT exp is {exp - now:.0f} s away, more than 24 h")
    sub = claims.get("sub")
    if not isinstance(sub, str) or not (sub.startswith("mailto:") or sub.startswith("https:")):
        raise ValueError(f"JWT sub is {sub!r}, not a mailto: or https: URI")
    return claims, key_bytes


# MARK: what the service saw

@dataclass
class PushRequest:
    """One POST to a push endpoint, and what the service answered."""
    endpoint_id: str
    headers: dict  # lower-case names
    body: bytes
    status: int = 0
    at: float = field(default_factory=time.time)
    vapid_claims: Optional[dict] = None
    vapid_key: Optional[str] = None  # k=, base64url
    problem: Optional[str] = None
    payload: Optional[dict] = None  # decrypted JSON, for test-held subscriptions
    plaintext: Optional[bytes] = None

    @property
    def accepted(self):
        return 200 <= self.status < 300

    @property
    def topic(self):
        return self.headers.get("topic")

    @property
    def ttl(self):
        return self.headers.get("ttl")

    @property
    def urgency(self):
        return self.headers.get("urgency")

    def __repr__(self):
        short = {k: self.payload.get(k) for k in ("kind", "conversationId", "seq", "title", "body", "count")} if self.payload else None
        return f"<push {self.endpoint_id[:8]} {self.status} topic={self.topic} {short or self.problem or ''}>"


class Subscription:
    """A subscription whose keys the test holds, as a browser's `PushSubscription` would be."""

    def __init__(self, service, endpoint_id):
        self.service = service
        self.id = endpoint_id
        self.private_key = ec.generate_private_key(ec.SECP256R1())
        self.p256dh = public_bytes(self.private_key)
        self.auth = os.urandom(16)

    @property
    def endpoint(self):
        return f"{self.service.url}/push/{self.id}"

    def to_json(self):
        """What `PushSubscription.toJSON()` gives, for `POST /v1/push/subscriptions`."""
        return {"endpoint": self.endpoint, "expirationTime": None, "keys": {"p256dh": b64url(self.p256dh), "auth": b64url(self.auth)}}

    def decrypt(self, body):
        return http_ece.decrypt(body, private_key=self.private_key, auth_secret=self.auth, version="aes128gcm")

    def requests(self):
        return self.service.requests_to(self.id)

    def pushes(self):
        """The accepted pushes' payloads, oldest first."""
        return [r.payload for r in self.service.requests_to(self.id) if r.accepted]


# MARK: the service

class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, owner):
        self.owner = owner
        self.connections = set()
        super().__init__(address, _PushHandler)

    def process_request(self, request, client_address):
        self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        self.connections.discard(request)
        super().shutdown_request(request)


class _PushHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as push services and AsyncHTTPClient use

    def log_message(self, *args):
        pass

    def _answer(self, status, extra_headers=None, body=b""):
        self.send_response(status)
        for name, value in (extra_headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path
        if not path.startswith("/push/"):
            self._answer(404)
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        status, extra = self.server.owner._receive(path[len("/push/"):], headers, body)
        self._answer(status, extra)

    def do_GET(self):
        self._answer(405, {"Allow": "POST"})


class PushService(AutopushSide):
    """See the module's doc. `url` takes RFC 8030 pushes; `ws_url` is for Firefox's `dom.push.serverURL`."""

    def __init__(self):
        self.changed = threading.Condition()
        self.requests = []
        self.problems = []
        self.subscriptions = {}
        self.channels = {}
        self.notifications = []  # to browsers, in order
        self.acks = []  # (channelID, version, code) from browsers
        self.connections = {}  # uaid -> websocket
        self.uaids = set()
        self.kept_pushes_newest_first = False  # on a browser's hello (a push service promises no order)
        self.forced = {}  # endpoint id -> status
        self.forced_next = []  # statuses for the next requests, in order
        self.retry_after = None
        self.expected_vapid_key = None  # base64url; when set, every k= must be this key
        self.is_down = False
        self._http = _HTTPServer(("127.0.0.1", 0), self)
        self.port = self._http.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._http_thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._http_thread.start()
        self._loop = asyncio.new_event_loop()
        self._ws_server = None
        ready = threading.Event()
        threading.Thread(target=self._run_loop, args=(ready,), daemon=True).start()
        if not ready.wait(10) or self._ws_server is None:
            raise RuntimeError("the push service's WebSocket server did not start")
        self.ws_port = self._ws_server.sockets[0].getsockname()[1]
        self.ws_url = f"ws://127.0.0.1:{self.ws_port}/"

    # MARK: test controls

    def subscribe(self):
        subscription = Subscription(self, uuid.uuid4().hex)
        with self.changed:
            self.subscriptions[subscription.id] = subscription
        return subscription

    def respond(self, target, status):
        """Answers every push to `target` (a Subscription, an endpoint id or URL) with `status`; None: normal."""
        endpoint_id = self._endpoint_id(target)
        with self.changed:
            if status is None:
                self.forced.pop(endpoint_id, None)
            else:
                self.forced[endpoint_id] = status

    def respond_next(self, count, status, retry_after=None):
        """Answers the next `count` pushes, to any endpoint, with `status` (e.g. 429, 503)."""
        with self.changed:
            self.forced_next.extend([status] * count)
            self.retry_after = retry_after

    def down(self):
        """The service is unreachable: its listening port closes and open connections drop."""
        with self.changed:
            if self.is_down:
                return
            self.is_down = True
            server = self._http
        server.shutdown()
        server.server_close()
        for connection in list(server.connections):
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._notify()

    def up(self):
        with self.changed:
            if not self.is_down:
                return
            deadline = time.monotonic() + 10
            while True:
                try:
                    self._http = _HTTPServer(("127.0.0.1", self.port), self)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            self.is_down = False
            self._http_thread = threading.Thread(target=self._http.serve_forever, daemon=True)
            self._http_thread.start()
            self.changed.notify_all()

    def close(self):
        self.down()
        if self._ws_server is not None:
            async def stop():
                self._ws_server.close()
                await self._ws_server.wait_closed()
            try:
                asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
            except Exception:  # noqa: BLE001 - closing what may already be closed
                pass
        self._loop.call_soon_threadsafe(self._loop.stop)

    # MARK: reading what happened

    def requests_to(self, target):
        endpoint_id = self._endpoint_id(target)
        with self.changed:
            return [r for r in self.requests if r.endpoint_id == endpoint_id]

    def accepted(self, target=None):
        with self.changed:
            return [r for r in self.requests if r.accepted and (target is None or r.endpoint_id == self._endpoint_id(target))]

    def wait_for(self, predicate, timeout=20, what="the condition"):
        """Waits until `predicate()` is truthy (it is called again on every change) and returns its value."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                value = predicate()
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out after {timeout} s waiting for {what}; pushes seen: {self.requests}; "
                                         f"problems: {self.problems}")
                self.changed.wait(min(left, 0.5))  # also re-check now and then: predicates may read the outside world

    def wait_for_request(self, subscription, predicate=lambda payload: True, timeout=20, what=None):
        """The first accepted push to `subscription` whose payload satisfies `predicate` (the PushRequest)."""
        def find():
            return next((r for r in self.requests_to(subscription) if r.accepted and r.payload is not None and predicate(r.payload)), None)
        return self.wait_for(find, timeout, what or f"a push to {subscription.id[:8]}")

    def wait_for_push(self, subscription, predicate=lambda payload: True, timeout=20, what=None):
        """The payload of the first accepted push to `subscription` that satisfies `predicate`."""
        return self.wait_for_request(subscription, predicate, timeout, what).payload

    def summary(self):
        with self.changed:
            return list(self.requests)

    # MARK: receiving (RFC 8030)

    def _endpoint_id(self, target):
        if isinstance(target, Subscription):
            return target.id
        if isinstance(target, str) and target.startswith("http"):
            return urlsplit(target).path.rsplit("/", 1)[-1]
        return target

    def _notify(self):
        with self.changed:
            self.changed.notify_all()

    def _problem(self, request, text):
        request.problem = text
        self.problems.append(f"{request.endpoint_id[:8]}: {text}")

    def _receive(self, endpoint_id, headers, body):
        request = PushRequest(endpoint_id, headers, body)
        extra = {}
        with self.changed:
            status = self._check(request)
            if status is None and endpoint_id in self.subscriptions:
                self._decrypt(self.subscriptions[endpoint_id], request)  # also what a forced error answers
            if status is None:
                if endpoint_id in self.forced:
                    status = self.forced[endpoint_id]
                elif self.forced_next:
                    status = self.forced_next.pop(0)
                    if self.retry_after is not None:
                        extra["Retry-After"] = str(self.retry_after)
            if status is None:
                status = self._deliver(request)
            request.status = status
            if 200 <= status < 300:
                extra["Location"] = f"{self.url}/m/{uuid.uuid4().hex}"
                extra["TTL"] = headers.get("ttl", "0")
            self.requests.append(request)
            self.changed.notify_all()
        return status, extra

    def _check(self, request):
        """What a push service checks before taking a push: None if fine, else the status to answer."""
        headers = request.headers
        if headers.get("content-encoding") != "aes128gcm":
            self._problem(request, f"Content-Encoding is {headers.get('content-encoding')!r}, not aes128gcm")
            return 400
        ttl = headers.get("ttl")
        if ttl is None or not ttl.isdigit():
            self._problem(request, f"TTL is {ttl!r}, not a non-negative integer")
            return 400
        urgency = headers.get("urgency")
        if urgency is not None and urgency not in ("very-low", "low", "normal", "high"):
            self._problem(request, f"Urgency is {urgency!r}")
            return 400
        topic = headers.get("topic")
        if topic is not None and (not topic or len(topic) > 32
                                  or any(not (c.isascii() and (c.isalnum() or c in "-_")) for c in topic)):
            self._problem(request, f"Topic {topic!r} is not at most 32 base64url characters")
            return 400
        if not request.body:
            self._problem(request, "empty body")
            return 400
        if len(request.body) > 4096:
            self._problem(request, f"body is {len(request.body)} bytes, over the 4096 push services take")
            return 413
        host = headers.get("host", "")
        try:
            claims, key = check_vapid(headers.get("authorization"), f"http://{host}")
        except ValueError as error:
            self._problem(request, f"VAPID: {error}")
            return 401
        request.vapid_claims = claims
        request.vapid_key = b64url(key)
        if self.expected_vapid_key is not None and unb64url(self.expected_vapid_key) != key:
            self._problem(request, f"VAPID k= {request.vapid_key} is not the server's key {self.expected_vapid_key}")
            return 401
        channel = self.channels.get(request.endpoint_id)
        if channel is not None and channel.key is not None and channel.key != key:
            self._problem(request, "VAPID k= is not the applicationServerKey the browser subscribed with")
            return 401
        return None

    def _decrypt(self, subscription, request):
        try:
            request.plaintext = subscription.decrypt(request.body)
        except Exception as error:  # noqa: BLE001
            self._problem(request, f"the body does not decrypt (RFC 8291 aes128gcm): {error!r}")
            return
        try:
            request.payload = json.loads(request.plaintext)
        except ValueError as error:
            self._problem(request, f"the decrypted body is not JSON: {error}: {request.plaintext[:200]!r}")

    def _deliver(self, request):
        if request.endpoint_id in self.subscriptions:
            return 201  # decrypted already; a push service could not tell a bad body, `problems` has it
        channel = self.channels.get(request.endpoint_id)
        if channel is None:
            return 404
        if channel.gone:
            return 410
        self._forward(request.endpoint_id, channel, request)
        return 201

def encrypt_for(subscription_json, payload: bytes) -> bytes:
    """RFC 8291 aes128gcm encryption for a browser's `PushSubscription.toJSON()`."""
    receiver = unb64url(subscription_json["keys"]["p256dh"])
    auth = unb64url(subscription_json["keys"]["auth"])
    sender = ec.generate_private_key(ec.SECP256R1())
    return http_ece.encrypt(payload, private_key=sender, dh=receiver, auth_secret=auth, version="aes128gcm")


# MARK: the fixture

try:
    import pytest
except ImportError:  # the module is usable without pytest
    pytest = None

if pytest is not None:
    @pytest.fixture
    def push_service():
        """A push service on loopback for one test; at the end, nothing it received may have failed its checks."""
        service = PushService()
        try:
            yield service
        finally:
            service.close()
        assert not service.problems, f"the push service found problems in what it received: {service.problems}"
