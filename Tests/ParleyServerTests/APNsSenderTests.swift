import Crypto
import Foundation
import HTTPTypes
import NIOCore
import ParleyCore
import ParleyStore
@testable import ParleyServer
import Testing

/// ``APNsSender``'s rules against an HTTP/2 stand-in of Apple's service, then through the server.
@Suite(.serialized) struct APNsSenderTests {
    static let device = String(repeating: "a1", count: 32)

    /// A provider key written as Apple hands it out (a PKCS#8 `.p8`), the configuration for it, and
    /// a stand-in that knows its public half.
    static func setUp(base: String? = nil) throws -> (APNsConfiguration, P256.Signing.PrivateKey, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-apns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = P256.Signing.PrivateKey()
        let keyFile = directory.appendingPathComponent("AuthKey_ABC123DEFG.p8").path
        try key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let trust = directory.appendingPathComponent("stand-in.pem").path
        try APNsStandIn.certificate.write(toFile: trust, atomically: true, encoding: .utf8)
        var configuration = APNsConfiguration(keyFile: keyFile, keyID: "ABC123DEFG", teamID: "TEAM123456", topic: "org.parley.app")
        configuration.trustedCertificatesFile = trust
        return (configuration, key, trust)
    }

    static func payload(_ kind: PushPayload.Kind, seq: Int64 = 7) -> PushPayload {
        PushPayload(
            kind: kind, conversationId: .direct(.random(), .random()), seq: seq, title: "Ada", body: "lunch?", count: 2, badge: 5, url: "/#/c/x")
    }

    @Test func alertsAndBackgroundPushesCarryWhatAPNsRequiresAndEachAnswerMeansWhatItSays() async throws {
        let (configuration, key, _) = try Self.setUp()
        let standIn = APNsStandIn(publicKey: key.publicKey, keyID: configuration.keyID, teamID: configuration.teamID, topic: configuration.topic)
        try await standIn.run { base in
            var configuration = configuration
            configuration.productionURL = base
            configuration.sandboxURL = base + "/sandbox"
            let sender = try APNsSender(configuration)
            let production = APNsDeviceRecord(token: Self.device, sandbox: false, createdAt: .now())
            let alert = Self.payload(.message)
            #expect(await sender.send(alert, to: production) == .delivered)
            let first = try #require(standIn.deliveries.first)
            #expect(first.path == "/3/device/\(Self.device)" && first.payload == alert)
            #expect(first.headers[HTTPField.Name("apns-push-type")!] == "alert")
            #expect(first.headers[HTTPField.Name("apns-collapse-id")!] == WebPushSender.topic(alert.conversationId.rawValue))
            #expect(
                first.aps
                    == APNsStandIn.APS(
                        alert: .init(title: "Ada", body: "lunch?"), badge: 5, sound: "default", threadID: alert.conversationId.rawValue, mutableContent: 1))

            // Tidy-ups are background pushes to a sandbox device's service.
            let sandbox = APNsDeviceRecord(token: Self.device, sandbox: true, createdAt: .now())
            #expect(await sender.send(Self.payload(.read), to: sandbox) == .delivered)
            let second = try #require(standIn.deliveries.last)
            #expect(second.path == "/sandbox/3/device/\(Self.device)" && second.headers[HTTPField.Name("apns-push-type")!] == "background")
            #expect(second.aps == APNsStandIn.APS(contentAvailable: 1), "nothing shown: the app acts on it")
            #expect(second.token == first.token, "the provider token is reused")

            // Rule 3.
            standIn.answer([
                (410, "Unregistered"), (400, "BadDeviceToken"), (429, "TooManyRequests"), (503, nil), (400, "BadTopic"), (403, "ExpiredProviderToken"),
            ])
            #expect(await sender.send(alert, to: production) == .deviceGone)
            #expect(await sender.send(alert, to: production) == .deviceGone)
            #expect(await sender.send(alert, to: production) == .retry(after: nil))
            #expect(await sender.send(alert, to: production) == .retry(after: nil))
            #expect(await sender.send(alert, to: production) == .refused(status: 400, reason: "BadTopic"))
            #expect(await sender.send(alert, to: production) == .retry(after: nil))
            #expect(await sender.send(alert, to: production) == .delivered)
            #expect(standIn.deliveries.last?.token != first.token, "an expired provider token is made again")
            #expect(standIn.problems.isEmpty)
            await sender.shutdown()
        }
    }

    @Test func theServerPushesToARegisteredDeviceAndForgetsAnUnregisteredOne() async throws {
        let (configuration, key, _) = try Self.setUp()
        let standIn = APNsStandIn(publicKey: key.publicKey, keyID: configuration.keyID, teamID: configuration.teamID, topic: configuration.topic)
        try await standIn.run { base in
            try await TestServer.run(configure: { server in
                var apns = configuration
                apns.productionURL = base
                server.push.apns = apns
                server.push.pollInterval = .milliseconds(20)
            }) { api in
                let ada = try await api.register("ada"), grace = try await api.register("grace")
                #expect(try await api.request(.get, "/v1/push/config", token: grace.token).decode(API.PushConfig.self).apns)
                let register = try await api.request(
                    .put, "/v1/push/apns-tokens/\(Self.device.uppercased())", token: grace.token, encoding: API.APNsTokenBody(environment: .production))
                #expect(register.status == .noContent)
                let bad = try await api.request(.put, "/v1/push/apns-tokens/xyz", token: grace.token, encoding: API.APNsTokenBody(environment: .production))
                #expect(bad.status == .badRequest && bad.errorCode == .invalidPushSubscription)
                let sent = try await api.send("hello from ada", from: ada, to: grace)
                try await eventually("the APNs push") { !standIn.deliveries.isEmpty }
                let delivery = try #require(standIn.deliveries.first)
                #expect(delivery.payload.seq == sent.seq && delivery.payload.body == "hello from ada" && delivery.payload.badge == 1)
                #expect(delivery.path == "/3/device/\(Self.device)", "kept in lower case")

                standIn.answer([(410, "Unregistered")])
                _ = try await api.send("again", from: ada, to: grace)
                try await eventually("the device forgotten") { try await api.store.apnsTokens(of: grace.id).isEmpty }
                #expect(try await api.request(.delete, "/v1/push/apns-tokens/\(Self.device)", token: grace.token).status == .notFound)
                #expect(standIn.problems.isEmpty)
            }
        }
    }
}
