import Foundation
import HTTPTypes
import ParleyCore
import Testing

/// A profile photo set or removed is told live (``PhotoRoutes`` rule 3): a `profile` frame reaches
/// the user's peers and the user's other devices, on every node, and no one else.
@Suite(.serialized) struct ProfileAnnouncementTests {
    @Test func peersAndMyOtherDevicesHearOfMyPhotoStrangersAndRemovedMembersDoNot() async throws {
        try await TestServer.run { api in try await Self.scenario(api, api) }
    }

    @Test func theAnnouncementCrossesNodes() async throws {
        let files = FileManager.default.temporaryDirectory.appendingPathComponent("parley-photos-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: files) }
        try await TestCluster.run(arguments: ["--files", files]) { cluster in
            try await cluster.withAPI(0) { nodeA in
                try await cluster.withAPI(1) { nodeB in try await Self.scenario(nodeA, nodeB) }
            }
        }
    }

    /// Ada changes her photo, then her name, through `nodeA`. Grace (her direct partner), Ada's other device, Rem
    /// (removed from the group Ada is in) and Eve (a stranger) listen on `nodeB`; Hal (only in the
    /// group with Ada) on `nodeA`. "Nothing arrived" is proven by a pong on the same node, after
    /// the frame reached Grace there: one announcement reaches a node's recipients together.
    static func scenario(_ nodeA: TestAPI, _ nodeB: TestAPI) async throws {
        let ada = try await nodeA.register("ada"), grace = try await nodeA.register("grace"), hal = try await nodeA.register("hal")
        let rem = try await nodeA.register("rem"), eve = try await nodeA.register("eve")
        for (one, other) in [(ada, grace), (grace, hal), (grace, rem)] {
            _ = try await nodeA.send("hi", from: one, to: other)
            _ = try await nodeA.send("hi!", from: other, to: one)
        }
        let group = try #require(try await nodeA.createGroup(by: grace, title: "Book club", members: [ada, hal, rem]).conversation?.id)
        let removed = try await nodeA.action(
            .post, "/v1/conversations/\(group)/members/\(rem.id)/remove", by: grace, API.GroupActionRequest(clientId: .random()))
        #expect(removed.status == .created)
        let adasPhone = try await nodeB.login("ada")
        let partner = try await nodeB.socket(grace), coMember = try await nodeA.socket(hal), otherDevice = try await nodeB.socket(adasPhone)
        let formerMember = try await nodeB.socket(rem), stranger = try await nodeB.socket(eve)
        for socket in [partner, coMember, otherDevice, formerMember, stranger] { _ = try await socket.synced() }

        let upload = try await nodeA.upload(TestFiles.png(width: 8, height: 8), by: ada)
        let set = try await nodeA.request(.put, "/v1/me/photo", token: ada.token, encoding: API.PhotoRequest(uploadId: upload.id))
        #expect(set.status == .ok)
        let path = try #require(try set.decode(User.self).photo)
        for socket in [partner, coMember, otherDevice] {
            let announced = try await socket.profile(of: ada.id, photo: path)
            #expect(announced.username == "ada" && announced.displayName == "Ada")
        }
        try await formerMember.heardNoProfile(before: "after-set")
        try await stranger.heardNoProfile(before: "after-set")

        #expect(try await nodeA.request(.delete, "/v1/me/photo", token: ada.token).status == .noContent)
        for socket in [partner, coMember, otherDevice] { _ = try await socket.profile(of: ada.id, photo: nil) }
        try await formerMember.heardNoProfile(before: "after-remove")
        try await stranger.heardNoProfile(before: "after-remove")

        // A new display name is told the same way, to the same people.
        let renamed = try await nodeA.request(.patch, "/v1/me", token: ada.token, encoding: API.ProfileRequest(displayName: "Ada King"))
        #expect(try renamed.status == .ok && renamed.decode(User.self).displayName == "Ada King")
        for socket in [partner, coMember, otherDevice] {
            let announced = try await socket.profile(of: ada.id, named: "Ada King")
            #expect(announced.username == "ada" && announced.photo == nil)
        }
        try await formerMember.heardNoProfile(before: "after-rename")
        try await stranger.heardNoProfile(before: "after-rename")
        for socket in [partner, coMember, otherDevice, formerMember, stranger] { await socket.close() }
    }
}

extension TestSocket {
    /// The first `profile` frame of `user` with `photo` (nil: removed).
    func profile(of user: UserID, photo: String?) async throws -> User {
        try await inbox.waitFor("profile of \(user) with photo \(photo ?? "none")") { frames in
            frames.lazy.compactMap { frame -> User? in
                if case .profile(let announced) = frame, announced.id == user, announced.photo == photo { announced } else { nil }
            }.first
        }
    }

    /// The first `profile` frame of `user` with the display name `name`.
    func profile(of user: UserID, named name: String) async throws -> User {
        try await inbox.waitFor("profile of \(user) named \(name)") { frames in
            frames.lazy.compactMap { frame -> User? in
                if case .profile(let announced) = frame, announced.id == user, announced.displayName == name { announced } else { nil }
            }.first
        }
    }

    /// Sends a ping and, once its pong is here, checks that no `profile` frame came at all: frames
    /// queued for this connection before the ping are written before its pong.
    func heardNoProfile(before ref: String) async throws {
        send(.ping(ref: ref))
        let frames = try await inbox.waitFor("pong \(ref)") { $0.contains(.pong(ref: ref)) ? $0 : nil }
        #expect(!frames.contains { if case .profile = $0 { true } else { false } }, "no profile frame: \(frames.suffix(5))")
    }
}
