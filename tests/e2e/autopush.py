"""The browser's side of the push-service stand-in (pushservice.py): Mozilla's autopush WebSocket
protocol, which Firefox speaks when `dom.push.serverURL` names the stand-in's `ws_url` (hello,
register, unregister, ack/nack, ping, and `notification` frames carrying the encrypted body). A push
to a browser's channel is kept until the browser acks it, sent at once when the browser is connected
and again when it says hello (oldest first, or newest first when a test asks), the newest of a `Topic` replacing an older one not yet delivered, as
autopush does. `AutopushSide` is mixed into `PushService`, whose lock (`changed`) and lists it uses."""
import asyncio
import base64
import json
import uuid
from dataclasses import dataclass
from typing import Optional

import websockets
from websockets.asyncio.server import serve as websocket_serve  # websockets >= 13


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    text = text.strip()
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Channel:
    """A browser's registration over the WebSocket (autopush's channelID)."""
    uaid: str
    key: Optional[bytes]  # the applicationServerKey the page subscribed with
    gone: bool = False


@dataclass
class Notification:
    """A push to a browser's channel, kept until the browser acks it."""
    uaid: str
    channel_id: str
    version: str
    topic: Optional[str]
    frame: str
    sent: bool = False
    ack_code: Optional[int] = None


class AutopushSide:
    def _run_loop(self, ready):
        asyncio.set_event_loop(self._loop)

        async def start():
            self._ws_server = await websocket_serve(self._ws_session, "127.0.0.1", 0, subprotocols=["push-notification"],
                                                     ping_interval=None, max_size=2 ** 20)
        try:
            self._loop.run_until_complete(start())
        finally:
            ready.set()
        self._loop.run_forever()

    def _forward(self, channel_id, channel, request):
        """Keeps the push for the browser and sends it now if the browser is connected (lock held)."""
        topic = request.topic
        if topic is not None:
            for old in self.notifications:
                if old.channel_id == channel_id and old.topic == topic and not old.sent and old.ack_code is None:
                    old.ack_code = -1  # replaced before delivery, as autopush does with a topic
        version = uuid.uuid4().hex
        frame = json.dumps({"messageType": "notification", "channelID": channel_id, "version": version,
                            "data": b64url(request.body), "headers": {"encoding": "aes128gcm"},
                            "ttl": int(request.ttl or 0)})
        notification = Notification(channel.uaid, channel_id, version, topic, frame)
        self.notifications.append(notification)
        ws = self.connections.get(channel.uaid)
        if ws is not None:
            notification.sent = True
            asyncio.run_coroutine_threadsafe(self._ws_send(ws, frame), self._loop)

    async def _ws_send(self, ws, frame):
        try:
            await ws.send(frame)
        except websockets.ConnectionClosed:
            pass

    async def _ws_session(self, ws):
        uaid = None
        try:
            async for raw in ws:
                try:
                    message = json.loads(raw)
                except ValueError:
                    continue
                kind = message.get("messageType") if isinstance(message, dict) else None
                if kind is None or kind == "ping":
                    await ws.send("{}")
                    continue
                if kind == "hello":
                    with self.changed:
                        asked = message.get("uaid")
                        uaid = asked if isinstance(asked, str) and asked in self.uaids else uuid.uuid4().hex
                        self.uaids.add(uaid)
                        self.connections[uaid] = ws
                        pending = [n for n in self.notifications if n.uaid == uaid and n.ack_code is None]
                        if self.kept_pushes_newest_first:
                            pending.reverse()
                        for notification in pending:
                            notification.sent = True
                        self.changed.notify_all()
                    await ws.send(json.dumps({"messageType": "hello", "uaid": uaid, "status": 200, "use_webpush": True,
                                              "broadcasts": {}}))
                    for notification in pending:
                        await ws.send(notification.frame)
                elif kind == "register":
                    channel_id = message.get("channelID")
                    key = message.get("key")
                    with self.changed:
                        self.channels[channel_id] = Channel(uaid, unb64url(key) if key else None)
                        self.changed.notify_all()
                    await ws.send(json.dumps({"messageType": "register", "channelID": channel_id, "status": 200,
                                              "pushEndpoint": f"{self.url}/push/{channel_id}"}))
                elif kind == "unregister":
                    channel_id = message.get("channelID")
                    with self.changed:
                        if channel_id in self.channels:
                            self.channels[channel_id].gone = True
                        self.changed.notify_all()
                    await ws.send(json.dumps({"messageType": "unregister", "channelID": channel_id, "status": 200}))
                elif kind in ("ack", "nack"):
                    with self.changed:
                        updates = message.get("updates") or [{"channelID": None, "version": message.get("version"),
                                                              "code": message.get("code")}]
                        for update in updates:
                            self.acks.append((update.get("channelID"), update.get("version"), update.get("code"), kind))
                            for notification in self.notifications:
                                if notification.version == update.get("version") and notification.ack_code is None:
                                    notification.ack_code = update.get("code") or 0
                        self.changed.notify_all()
                # broadcast_subscribe and anything else: nothing to answer
        except websockets.ConnectionClosed:
            pass
        finally:
            with self.changed:
                if uaid is not None and self.connections.get(uaid) is ws:
                    del self.connections[uaid]
                    for notification in self.notifications:
                        if notification.uaid == uaid and notification.ack_code is None:
                            notification.sent = False  # sent again after the next hello
                self.changed.notify_all()

    # MARK: sending as an application server (to prove the browser side without Parley)

    def browser_channel_acks(self, channel_id):
        with self.changed:
            return [a for a in self.acks if a[0] == channel_id]
