import Foundation
import ParleyCore

/// The live connection's lifecycle: start and stop, the reconnect loop with backoff (sync rule 3),
/// and the ``Heartbeat`` that notices a dead line.
extension ParleyClient {
    /// Starts syncing: the live connection, reconnecting until ``stop()``.
    public func start() {
        guard loop == nil, !sessionEnded else { return }
        loop = Task { [weak self] in await self?.runConnectionLoop() }
        #if canImport(Network)
        pathWatcher = NetworkPathWatcher(client: self)
        #endif
    }

    /// Stops syncing and closes the connection (the outbox stays, to go out next time).
    public func stop() {
        loop?.cancel()
        loop = nil
        retryTimer?.cancel()
        watchdog?.cancel()
        backoff?.cancel()
        #if canImport(Network)
        pathWatcher = nil
        #endif
        connection?.close()
        connection = nil
        outbox.connectionLost()
        setConnectionState(.offline)
    }

    // MARK: the loop (rule 3)

    /// Reconnects now instead of waiting out the backoff (call it when the network comes back; on
    /// Apple platforms ``NetworkPathWatcher`` does). Does nothing while connected.
    public func reconnectNow() {
        skipBackoff = true
        backoff?.cancel()
    }

    /// The network changed under a live connection (another interface, a new address): its socket
    /// is likely dead, so it is dropped and a new one opened at once.
    public func networkChanged() {
        connection?.abort()
        reconnectNow()
    }

    private func runConnectionLoop() async {
        var attempt = 0
        while !Task.isCancelled {
            setConnectionState(.connecting)
            let transport = self.transport
            if let connection = try? await withDeadline(heartbeat.timeout, discard: { $0.abort() }, { try await transport.connect() }) {
                self.connection = connection
                lineWatch = LineWatch(now: .now)
                sendExpectingAnswer(.hello(token: session.token, after: position))
                watchdog = Task { [weak self] in await self?.watchLine(connection) }
                for await frame in connection.frames {
                    lineWatch?.received(at: .now)
                    if case .welcome = frame { attempt = 0 }
                    await handle(frame)
                }
                watchdog?.cancel()
                lineWatch = nil
                self.connection = nil
            }
            outbox.connectionLost()
            if sessionEnded {
                setConnectionState(.unauthorized)
                loop = nil
                return
            }
            setConnectionState(.offline)
            guard !Task.isCancelled else { return }
            let ceiling = min(15.0, 0.5 * pow(2, Double(attempt)))
            attempt += 1
            if skipBackoff {
                skipBackoff = false
                continue
            }
            let wait = Task { try await Task.sleep(for: .milliseconds(Int64(Double.random(in: 0...ceiling) * 1000))) }
            backoff = wait
            _ = await wait.result
            backoff = nil
            skipBackoff = false
        }
    }

    /// ``Heartbeat`` rules 1–3 for one connection.
    private func watchLine(_ connection: any RealtimeConnection) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeat.tick)
            guard !Task.isCancelled, lineWatch != nil else { return }
            if let arrived = connection.lastArrival { lineWatch?.arrived(at: arrived) }
            guard let watch = lineWatch else { return }
            switch watch.verdict(at: .now, heartbeat) {
            case .fine: break
            case .ping:
                pings += 1
                sendExpectingAnswer(.ping(ref: "heartbeat-\(pings)"))
            case .dead:
                connection.abort()
                return
            }
        }
    }

    /// Sends a frame the server answers (``Heartbeat`` rule 2).
    func sendExpectingAnswer(_ frame: ClientFrame) {
        guard let connection else { return }
        lineWatch?.expectAnswer(at: .now)
        connection.send(frame)
    }

    func setConnectionState(_ state: ConnectionState) {
        guard connectionState != state else { return }
        connectionState = state
        emit(.connection(state))
    }
}
