import Foundation
import ParleyCore
import ParleySDK
import Testing

/// ``ClientStorage/store(for:)`` on a file SQLite cannot read, and ``ClientStorage/setAsideStore(for:)``.
@Suite struct DamagedLocalStoreTests {
    @Test func aFileThatIsNoDatabaseIsAClearErrorAndSetAsideMakesRoomForAFreshOne() throws {
        let storage = ClientStorage(directory: FileManager.default.temporaryDirectory.appendingPathComponent("parley-damaged-\(UUID().uuidString)"))
        defer { try? FileManager.default.removeItem(at: storage.directory) }
        let user = UserID.random()
        let conversation = ConversationID.direct(user, .random())
        try storage.store(for: user).setPosition(42)
        let file = storage.directory.appendingPathComponent("account-\(user.rawValue).sqlite")
        // Written over from its first page on: its header is no SQLite header any more.
        let handle = try FileHandle(forWritingTo: file)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 8192))
        try handle.close()

        let error = #expect(throws: DamagedLocalStore.self) { _ = try storage.store(for: user) }
        #expect(error?.path == file.path)
        let aside = try storage.setAsideStore(for: user)
        #expect(aside.lastPathComponent.hasPrefix("account-\(user.rawValue).damaged-") && FileManager.default.fileExists(atPath: aside.path))
        #expect(!FileManager.default.fileExists(atPath: file.path))
        let fresh = try storage.store(for: user)
        #expect(try fresh.position() == nil, "a new, empty copy: the client syncs it from the server")
        #expect(try fresh.messages(in: conversation).isEmpty)
    }
}
