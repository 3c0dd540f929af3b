import Foundation
import HTTPTypes
import ParleyCore
@testable import ParleyServer
import ParleyTestSupport
import Testing

/// ``PushTargetBackoff`` end to end: a subscription that says "try again" rests alone, so the
/// user's other browser gets each push once, at once, and the tidy-ups of what it shows.
extension PushDeliveryTests {
    /// Before, any "try again" retried the whole user: a `Retry-After` of an hour from one browser
    /// held the other's pushes for that hour, so a message deleted for everyone stayed on its
    /// screen; and a flaky browser's 503s made the other alert again at each retry.
    @Test func aSubscriptionThatSaysTryAgainRestsAloneAndTheOthersGetEachPushOnce() async throws {
        try await Self.run { api, service, base in
            let ada = try await api.register("ada"), grace = try await api.register("grace"), alan = try await api.register("alan")
            for (account, name) in [(grace, "phone"), (grace, "laptop"), (alan, "tablet"), (alan, "desktop")] {
                try await api.subscribe(account, PushServiceStandIn.Browser(name: name), base: base, service: service)
            }
            service.answer("laptop", with: [429], retryAfter: "3600")
            let secret = try await api.send("SECRET v1", from: ada, to: grace)
            try await eventually("the phone's push") { service.deliveries(to: "phone").count == 1 }
            // The two browsers are pushed at once: the laptop's 429 may come after the phone's 201.
            try await eventually("the laptop's refusal") { service.refused("laptop") == 1 }
            let delete = API.MessageActionBody(clientId: .random(), kind: .delete)
            #expect(try await api.act(ada, secret.seq, in: secret.conversationId, delete).status == .ok)
            try await eventually("the phone's withdrawal, not an hour later") { service.deliveries(to: "phone").count == 2 }
            #expect(service.deliveries(to: "phone").map(\.payload.kind) == [.message, .withdraw])
            let next = try await api.send("are you there?", from: ada, to: grace)
            try await eventually("the next push") { service.deliveries(to: "phone").count == 3 }
            #expect(service.deliveries(to: "phone").last?.payload.seq == next.seq)
            #expect(service.refused("laptop") == 1 && service.deliveries(to: "laptop").isEmpty, "the laptop rests for its hour")

            service.answer("desktop", with: [503, 503])
            _ = try await api.send("hi alan", from: ada, to: alan)
            try await api.pushed(alan)
            try await eventually("the desktop asked") { service.refused("desktop") == 1 }
            #expect(service.deliveries(to: "tablet").map(\.payload.kind) == [.message], "once, though the desktop said try again")
        }
    }
}

extension PushDeliveryTests {
    /// ``PushSlots``: users whose push service never answers take every fast slot for no longer
    /// than ``PushDispatcher/slowAfter``; another user's push, to another service, then goes out.
    /// Before, they held all 64 slots until their requests timed out.
    @Test func pushServicesThatNeverAnswerHoldOtherUsersPushesOnlyUntilTheyAreSlow() async throws {
        try await Self.run { api, service, base in
            defer { service.releaseHeld() }
            let ada = try await api.register("ada"), grace = try await api.register("grace")
            var hanging: [Account] = []
            for index in 0..<(PushDispatcher.batch + 4) {
                let account = try await api.register("hang\(index)")
                try await api.subscribe(account, PushServiceStandIn.Browser(name: "hang\(index)"), base: base, service: service)
                service.hold("hang\(index)")
                hanging.append(account)
            }
            let accounts = hanging
            try await PushServiceStandIn.run { otherBase, other in
                try await api.subscribe(grace, PushServiceStandIn.Browser(name: "grace"), base: otherBase, service: other)
                for (index, account) in accounts.enumerated() {  // a ring: one new conversation per sender, as the limit allows
                    _ = try await api.send("hi", from: accounts[(index + 1) % accounts.count], to: account)
                }
                // The HTTP client opens 8 connections to one service; the other pushes wait for one, slots held all the same.
                try await eventually("the hanging service's connections held", within: .seconds(30)) { service.heldRequests == 8 }
                let sent = try await api.send("to grace", from: ada, to: grace)
                let took = try await ContinuousClock().measure {
                    try await eventually("grace's push", within: .seconds(90)) { other.deliveries(to: "grace").count == 1 }
                }
                // Before, the first slot came free when the pushes queued behind those 8 connections gave up
                // waiting for one, after the HTTP client's 10-s connection timeout (grace waited 8-9 s).
                #expect(took < .seconds(7.5), "grace waited \(took): about slowAfter, 2 s (before: 8-9 s)")
                #expect(other.deliveries(to: "grace").first?.payload.seq == sent.seq)
            }
        }
    }
}
