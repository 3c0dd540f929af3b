import Crypto
import Foundation
import ParleyCore
import Synchronization

/// Rule 9 of the crash checks: pushes owed survive kills. Each group has a fourth member who never
/// connects and has a Web Push subscription on a local push service (``PushServiceSink``). Once the
/// load has drained, the newest message push that member got (decrypted with their keys, as their
/// browser would) must name the group's newest message that is not deleted, or a later one: the
/// pushes due for the messages were sent, collapsed, whatever was killed meanwhile.
final class PushWatchers: Sendable {
    struct Watcher: Sendable {
        let group: ConversationID
        let session: BenchAPI.Session
        let key: P256.KeyAgreement.PrivateKey
        let auth: [UInt8]
    }

    let sink: PushServiceSink
    private let watchers = Mutex<[Watcher]>([])

    init() async throws { sink = try await PushServiceSink() }

    /// Subscribes `session` (a member of `group`) at the sink.
    func watch(_ group: ConversationID, as session: BenchAPI.Session, api: BenchAPI) async throws {
        let watcher = Watcher(group: group, session: session, key: P256.KeyAgreement.PrivateKey(), auth: (0..<16).map { _ in UInt8.random(in: 0...255) })
        let index = watchers.withLock { watchers in
            watchers.append(watcher)
            return watchers.count - 1
        }
        try await api.postNoContent(
            "/v1/push/subscriptions",
            API.WebPushSubscriptionBody(
                endpoint: "http://127.0.0.1:\(sink.port)/push/\(index)",
                keys: .init(p256dh: Self.base64URL(watcher.key.publicKey.x963Representation), auth: Self.base64URL(watcher.auth))),
            token: session.token)
    }

    /// What rule 9 found wrong, waiting up to `limit` for the last pushes.
    func check(api: BenchAPI, within limit: Duration) async -> [String] {
        let deadline = ContinuousClock.now + limit
        var problems: [String] = []
        for (index, watcher) in watchers.withLock({ $0 }).enumerated() {
            let who = "group \(index)'s offline member"
            guard let history = try? await api.fullHistory(watcher.session, watcher.group) else {
                problems.append("\(who): history unreadable")
                continue
            }
            guard let newest = history.last(where: { $0.entry == nil && $0.deletedAt == nil })?.seq else { continue }
            var pushed: Int64 = 0
            repeat {
                pushed = 0
                for body in sink.bodies(of: index) {
                    guard let payload = Self.decrypt(body, key: watcher.key, auth: watcher.auth) else {
                        problems.append("\(who): a push that does not decrypt")
                        continue
                    }
                    if payload.kind == .message, payload.conversationId == watcher.group { pushed = max(pushed, payload.seq) }
                }
                if pushed >= newest { break }
                try? await Task.sleep(for: .milliseconds(100))
            } while ContinuousClock.now < deadline
            if pushed < newest { problems.append("\(who): the newest message (seq \(newest)) was never pushed; pushes reached seq \(pushed)") }
            if pushed > (history.last?.seq ?? 0) { problems.append("\(who): a push for seq \(pushed), past the conversation's end") }
        }
        return problems
    }

    /// RFC 8291 §3.4 as a browser does it (one record).
    static func decrypt(_ body: [UInt8], key: P256.KeyAgreement.PrivateKey, auth: [UInt8]) -> PushPayload? {
        guard body.count > 21 + 65 + 16 else { return nil }
        let salt = Array(body[0..<16]), idLength = Int(body[20])
        guard idLength == 65, body.count > 21 + idLength + 16 else { return nil }
        let senderPublic = Array(body[21..<21 + idLength])
        guard let sender = try? P256.KeyAgreement.PublicKey(x963Representation: senderPublic),
            let ecdh = try? key.sharedSecretFromKeyAgreement(with: sender)
        else { return nil }
        let info = Array("WebPush: info".utf8) + [0] + Array(key.publicKey.x963Representation) + senderPublic
        let ikm = ecdh.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: info, outputByteCount: 32)
        let contentKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
        let sealed = Array(body[(21 + idLength)...])
        guard let gcmNonce = try? AES.GCM.Nonce(data: nonce.withUnsafeBytes { [UInt8]($0) }),
            let box = try? AES.GCM.SealedBox(nonce: gcmNonce, ciphertext: sealed.dropLast(16), tag: sealed.suffix(16)),
            var record = try? [UInt8](AES.GCM.open(box, using: contentKey))
        else { return nil }
        while record.last == 0 { record.removeLast() }
        guard record.last == 2 else { return nil }
        return try? JSONDecoder().decode(PushPayload.self, from: Data(record.dropLast()))
    }

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }
}
