"""A TCP relay for tests that can be frozen: it stops forwarding in both directions without closing
anything, the way a dead network does (the sockets stay "open"; nothing arrives). Given `rewrite`
(pairs of byte strings of equal length), it stands in for a hostile server: what the server sends
has each first string replaced by its second (lengths, and so HTTP and WebSocket framing, unchanged)."""
import socket
import threading


class FreezableRelay:
    def __init__(self, target_port, rewrite=(), port=0):
        assert all(len(old) == len(new) for old, new in rewrite)
        self.target_port = target_port
        self.rewrite = rewrite
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", port))  # a port given: the relay back where a closed one was
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.running = threading.Event()  # set = forwarding
        self.running.set()
        self.stopped = False
        self.sockets = []
        threading.Thread(target=self._accept, daemon=True).start()

    def freeze(self):
        self.running.clear()

    def thaw(self):
        self.running.set()

    def close(self):
        self.stopped = True
        self.running.set()
        for s in [self.listener] + self.sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked on it, so its port is free at once
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass

    def _accept(self):
        while not self.stopped:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target_port))
            self.sockets += [client, server]
            for source, destination in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, destination, source is server), daemon=True).start()

    def _pipe(self, source, destination, from_server):
        while not self.stopped:
            self.running.wait()  # frozen: read nothing, so nothing is forwarded and nothing closes
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                for s in (source, destination):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                return
            self.running.wait()  # a read that was under way as the freeze began waits for the thaw
            for old, new in self.rewrite if from_server else ():
                data = data.replace(old, new)
            try:
                destination.sendall(data)
            except OSError:
                return
