import Testing

/// Polls `condition` (a database read) until it holds, for at most 20 s: a test waiting for
/// PostgreSQL to reach a state (a lock waited on), which it cannot be told of.
func eventuallyTrue(_ what: String, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(20)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("never: \(what)")
    return false
}
