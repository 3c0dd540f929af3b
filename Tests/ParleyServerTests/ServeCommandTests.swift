import Foundation
import Testing

/// `parley serve` refuses bad configuration with a clear message instead of starting half-configured.
@Suite struct ServeCommandTests {
    static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("parley")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardError = output
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test(arguments: [
        (["serve", "--port", "70000"], [:], "port must be from 0 to 65535"),
        (["serve", "--log-level", "loud"], [:], "Unknown log level 'loud'"),
        (["serve", "--durability", "maybe"], [:], "Unknown durability 'maybe'"),
        (["serve", "--bcrypt-cost", "3"], [:], "bcrypt-cost must be from 4 to 31"),
        (["serve", "--log-format", "xml"], [:], "Unknown log format 'xml'"),
        (["serve"], ["PARLEY_PORT": "eighty"], "PARLEY_PORT must be a whole number"),
        (["serve", "--sends-per-second", "0"], [:], "sends-per-second must be more than 0"),
    ] as [([String], [String: String], String)])
    func badSettingsAreRefused(arguments: [String], environment: [String: String], message: String) throws {
        let (status, output) = try Self.run(arguments, environment: environment)
        #expect(status != 0)
        #expect(output.contains(message), "\(output)")
    }
}
