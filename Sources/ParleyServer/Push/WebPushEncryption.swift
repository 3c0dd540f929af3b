import Crypto
import Foundation

/// The body of a Web Push message: RFC 8291 message encryption over RFC 8188's `aes128gcm`
/// content coding, so that only the subscribed browser can read it (the push service relays bytes).
///
/// Rules:
/// 1. Keys: a new sender key pair per message (ECDH with the subscription's `p256dh` key), mixed
///    with the subscription's 16-byte `auth` secret: `IKM = HKDF(auth, ecdh, "WebPush: info" ‖ 0 ‖
///    ua_public ‖ as_public, 32)`, then a random 16-byte salt gives the content key (16 bytes) and
///    nonce (12 bytes) as RFC 8188 says.
/// 2. One record: `salt ‖ rs = 4096 ‖ idlen = 65 ‖ sender public key ‖ AES-128-GCM(plaintext ‖ 0x02 ‖
///    zero padding)`; push services take bodies of at most 4,096 bytes, so a plaintext is at most
///    ``maxPlaintextBytes`` with its padding, and a longer one is refused (never split or cut).
/// 3. Padding (zeros after the delimiter) hides a message's length from the push service.
/// RFC 8291 Appendix A's example encrypts to exactly its published bytes (`WebPushEncryptionTests`).
enum WebPushEncryption {
    /// Record size written in the header: the whole body is one record.
    static let recordSize = 4096
    /// Header bytes: salt (16), record size (4), key id length (1), sender public key (65).
    static let headerBytes = 86
    /// The most plaintext (with padding) one message carries: 4,096 − header − delimiter − tag.
    static let maxPlaintextBytes = recordSize - headerBytes - 1 - 16

    enum Failure: Error, Equatable {
        /// The subscription's `p256dh` is not an uncompressed P-256 point, or `auth` is not 16 bytes.
        case invalidSubscriptionKeys
        /// Plaintext and padding exceed ``maxPlaintextBytes``.
        case tooLong
    }

    /// Encrypts `plaintext` for the subscription (`p256dh`: its 65-byte public key, `auth`: its
    /// 16-byte secret). `sender` and `salt` are fresh unless a test fixes them.
    static func encrypt(
        _ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8], padding: Int = 0,
        sender: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(), salt: [UInt8]? = nil
    ) throws -> [UInt8] {
        guard auth.count == 16, p256dh.count == 65, let receiver = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh) else {
            throw Failure.invalidSubscriptionKeys
        }
        guard padding >= 0, plaintext.count + padding <= maxPlaintextBytes else { throw Failure.tooLong }
        let salt = salt ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
        let senderPublic = [UInt8](sender.publicKey.x963Representation)
        let (key, nonce) = try contentKey(
            ecdh: sender.sharedSecretFromKeyAgreement(with: receiver), auth: auth, receiverPublic: p256dh, senderPublic: senderPublic, salt: salt)
        let record = plaintext + [2] + [UInt8](repeating: 0, count: padding)
        let sealed = try AES.GCM.seal(record, using: key, nonce: AES.GCM.Nonce(data: nonce))
        return salt + withUnsafeBytes(of: UInt32(recordSize).bigEndian, Array.init) + [UInt8(senderPublic.count)] + senderPublic
            + sealed.ciphertext + sealed.tag
    }

    /// Rule 1: the content encryption key and nonce.
    static func contentKey(
        ecdh: SharedSecret, auth: [UInt8], receiverPublic: [UInt8], senderPublic: [UInt8], salt: [UInt8]
    ) throws -> (SymmetricKey, [UInt8]) {
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
        let ikm = ecdh.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: ikm, salt: salt)
        let key = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        return (key, nonce.withUnsafeBytes { [UInt8]($0) })
    }
}

extension WebPushEncryption {
    /// Whether `bytes` is an uncompressed P-256 point on the curve (what `p256dh` must be).
    static func isValidPublicKey(_ bytes: [UInt8]) -> Bool {
        (try? P256.KeyAgreement.PublicKey(x963Representation: bytes)) != nil
    }
}
