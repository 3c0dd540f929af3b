#if canImport(Network)
import Dispatch
import Network

/// On Apple platforms: reconnects a ``ParleyClient`` at once when the network path comes back, and
/// drops a connection whose network changed (Wi-Fi to cellular), instead of waiting out the backoff
/// or the ``Heartbeat``. Started and stopped by the client itself. (Not compiled on Linux, which has
/// no Network framework: there the client reconnects on its next backoff tick.)
@MainActor
final class NetworkPathWatcher {
    private let monitor = NWPathMonitor()
    private weak var client: ParleyClient?
    private var previous: (satisfied: Bool, interfaces: [String])?

    init(client: ParleyClient) {
        self.client = client
        monitor.pathUpdateHandler = { [weak self] path in
            let satisfied = path.status == .satisfied
            let interfaces = path.availableInterfaces.map(\.name)
            Task { @MainActor [weak self] in self?.update(satisfied: satisfied, interfaces: interfaces) }
        }
        monitor.start(queue: DispatchQueue(label: "parley.network-path"))
    }

    private func update(satisfied: Bool, interfaces: [String]) {
        defer { previous = (satisfied, interfaces) }
        guard satisfied, let client, let before = previous else { return }
        if !before.satisfied {
            client.reconnectNow()
        } else if before.interfaces != interfaces {
            client.networkChanged()
        }
    }

    deinit { monitor.cancel() }
}
#endif
