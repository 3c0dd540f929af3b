import Foundation
import ParleyCore
@testable import ParleyServer
import Testing

/// Pushes in a cluster: every node runs a dispatcher over the one queue, and each push is sent by
/// exactly one of them (PushQueueStore rule 2).
@Suite(.serialized) struct PushClusterTests {
    @Test func eachMessageIsPushedOnceWhicheverNodeTookIt() async throws {
        try await PushServiceStandIn.run { base, service in
            try await TestCluster.run(nodes: 2, arguments: ["--push-allow-loopback"]) { cluster in
                try await cluster.withAPI(0) { nodeA in
                    try await cluster.withAPI(1) { nodeB in
                        let ada = try await nodeA.register("ada"), grace = try await nodeA.register("grace")
                        let chat = try await nodeA.send("hello", from: ada, to: grace).conversationId
                        try await nodeB.subscribe(grace, PushServiceStandIn.Browser(name: "grace"), base: base, service: service)
                        var sent: [Int64] = []
                        for index in 0..<20 {
                            let node = index.isMultiple(of: 2) ? nodeA : nodeB
                            sent.append(try await node.send("message \(index)", from: ada, in: chat).seq)
                        }
                        try await nodeA.pushed(grace)
                        let pushes = service.deliveries(to: "grace").map(\.payload)
                        // Collapsed as they came, but every message counted exactly once across both nodes' pushes.
                        #expect(pushes.reduce(0) { $0 + ($1.count ?? 0) } == sent.count, "\(pushes.map { "\($0.seq)×\($0.count ?? 0)" })")
                        #expect(Set(pushes.map(\.seq)).count == pushes.count, "no message pushed twice")
                        #expect(pushes.last?.seq == sent.last)
                        #expect(service.problems.isEmpty)
                    }
                }
            }
        }
    }
}
