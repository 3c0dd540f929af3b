import Crypto
import Foundation
@testable import ParleyServer
import Testing

/// ``WebPushEncryption`` and ``VAPIDKey`` against RFC 8291 Appendix A and RFC 8292, and as a
/// receiving browser would read them.
@Suite struct WebPushEncryptionTests {
    // RFC 8291 Appendix A (published example keys, not credentials).
    static let plaintext = "When I grow up, I want to be a watermelon"
    static let senderPrivate = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let receiverPrivate = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let receiverPublic = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let body =
        "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"
        + "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func bytes(_ base64url: String) throws -> [UInt8] { try #require(Base64URL.decode(base64url)) }

    @Test func theRFC8291ExampleEncryptsToItsPublishedBytes() throws {
        let sender = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes(Self.senderPrivate))
        let body = try WebPushEncryption.encrypt(
            Array(Self.plaintext.utf8), p256dh: Self.bytes(Self.receiverPublic), auth: Self.bytes(Self.auth), sender: sender,
            salt: Self.bytes(Self.salt))
        #expect(Base64URL.encode(body) == Self.body)
    }

    @Test func aBrowserDecryptsWhatIsSentAndNothingTamperedWith() throws {
        let browser = P256.KeyAgreement.PrivateKey()
        let auth = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let message = Array(#"{"title":"Ada","body":"Café? 東京 🙂"}"#.utf8)
        let body = try WebPushEncryption.encrypt(message, p256dh: Array(browser.publicKey.x963Representation), auth: auth, padding: 100)
        #expect(body.count == WebPushEncryption.headerBytes + message.count + 1 + 100 + 16, "padding hides the length")
        #expect(try Self.decrypt(body, with: browser, auth: auth) == message)
        var tampered = body
        tampered[tampered.count - 1] ^= 1
        #expect(throws: (any Error).self) { try Self.decrypt(tampered, with: browser, auth: auth) }
        let other = P256.KeyAgreement.PrivateKey()
        #expect(throws: (any Error).self) { try Self.decrypt(body, with: other, auth: auth) }
    }

    @Test func badKeysAndTooLongMessagesAreRefused() throws {
        let browser = Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
        let auth = [UInt8](repeating: 7, count: 16)
        #expect(throws: WebPushEncryption.Failure.invalidSubscriptionKeys) { try WebPushEncryption.encrypt([1], p256dh: browser, auth: [1, 2]) }
        #expect(throws: WebPushEncryption.Failure.invalidSubscriptionKeys) {
            try WebPushEncryption.encrypt([1], p256dh: [4] + [UInt8](repeating: 9, count: 64), auth: auth)
        }
        let longest = [UInt8](repeating: 65, count: WebPushEncryption.maxPlaintextBytes)
        #expect(try WebPushEncryption.encrypt(longest, p256dh: browser, auth: auth).count == WebPushEncryption.recordSize)
        #expect(throws: WebPushEncryption.Failure.tooLong) { try WebPushEncryption.encrypt(longest + [1], p256dh: browser, auth: auth) }
    }

    @Test func theVAPIDTokenIsSignedForTheEndpointsOriginAndVerifies() throws {
        let key = VAPIDKey()
        let expires = Date(timeIntervalSince1970: 1_790_000_000)
        let header = try key.authorization(
            for: URL(string: "https://push.example.net:8443/wpush/v2/abc?x=1")!, subject: "mailto:ops@example.com", expiresAt: expires)
        let parts = header.split(separator: " ")
        #expect(parts.count == 3 && parts[0] == "vapid")
        let token = String(parts[1].dropFirst(2).dropLast())  // t=…,
        #expect(parts[2] == "k=\(key.publicKey)")
        let pieces = token.split(separator: ".").map(String.init)
        #expect(pieces.count == 3)
        let claims = try JSONSerialization.jsonObject(with: Data(Self.bytes(pieces[1]))) as? [String: Any]
        #expect(claims?["aud"] as? String == "https://push.example.net:8443")
        #expect(claims?["exp"] as? Int == 1_790_000_000)
        #expect(claims?["sub"] as? String == "mailto:ops@example.com")
        let publicKey = try P256.Signing.PublicKey(x963Representation: Self.bytes(key.publicKey))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: Self.bytes(pieces[2]))
        #expect(publicKey.isValidSignature(signature, for: Array((pieces[0] + "." + pieces[1]).utf8)))
        #expect(!publicKey.isValidSignature(signature, for: Array((pieces[0] + "." + pieces[1] + "x").utf8)))
        let normalized = try key.authorization(for: URL(string: "HTTPS://Push.Example.NET:443/x")!, subject: "mailto:a@b.c", expiresAt: expires)
        let normalizedClaims =
            try JSONSerialization.jsonObject(
                with: Data(Self.bytes(String(normalized.split(separator: " ")[1].dropFirst(2).dropLast().split(separator: ".")[1])))) as? [String: Any]
        #expect(normalizedClaims?["aud"] as? String == "https://push.example.net", "the origin as push services compare it")
    }

    /// What a browser does with a push body (RFC 8291 §3.4, one record), written apart from the sender's code.
    static func decrypt(_ body: [UInt8], with browser: P256.KeyAgreement.PrivateKey, auth: [UInt8]) throws -> [UInt8] {
        let salt = Array(body[0..<16]), idLength = Int(body[20])
        let senderPublic = Array(body[21..<21 + idLength])
        let ecdh = try browser.sharedSecretFromKeyAgreement(with: P256.KeyAgreement.PublicKey(x963Representation: senderPublic))
        let info = Array("WebPush: info".utf8) + [0] + Array(browser.publicKey.x963Representation) + senderPublic
        let ikm = ecdh.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: info, outputByteCount: 32)
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Array("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
        let sealed = Array(body[(21 + idLength)...])
        let box = try AES.GCM.SealedBox(
            nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { [UInt8]($0) }), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
        var record = try [UInt8](AES.GCM.open(box, using: key))
        while record.last == 0 { record.removeLast() }
        guard record.last == 2 else { throw WebPushEncryption.Failure.tooLong }
        return Array(record.dropLast())
    }
}
