import Crypto
import Foundation
@testable import ParleyServer
import Testing

/// ``VAPIDKey/loadOrCreate(at:)`` and ``WebPushEndpoint`` rules.
@Suite struct WebPushSetupTests {
    @Test func theVAPIDKeyIsMadeOnceKeptPrivateAndNeverReplaced() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("vapid.pem").path
        let first = try VAPIDKey.loadOrCreate(at: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try VAPIDKey.loadOrCreate(at: path).publicKey == first.publicKey, "the same key after a restart")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["vapid.pem"], "no temporary file left")
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        _ = try VAPIDKey.loadOrCreate(at: path)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600, "tightened")
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: VAPIDKeyFileError.self) { try VAPIDKey.loadOrCreate(at: path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "not a key", "never replaced")
    }

    @Test func endpointsMustBePublicHTTPS() {
        for good in [
            "https://fcm.googleapis.com/fcm/send/abc:def", "https://updates.push.services.mozilla.com/wpush/v2/gAAA",
            "https://web.push.apple.com/QGuQyavXutnMH6Ig2uYOJDwA", "https://push.example.net:8443/x", "https://8.8.8.8/p",
            "https://cafe.be/push", "https://[2001:4860:4860::8888]/p", "https://push.example.net:443/x?a=1#f", "https://[2606:4700::1]:8443/p",
        ] {
            #expect(WebPushEndpoint.validate(good) != nil, "\(good)")
        }
        for bad in [
            "http://push.example.net/x", "ftp://push.example.net/x", "https:///nohost", "https://user:pw@push.example.net/x",
            "https://localhost/x", "https://a.localhost/x", "https://printer.local/x", "https://db.internal/x", "https://nas.home.arpa/x",
            "https://127.0.0.1/x", "https://10.1.2.3/x", "https://172.20.0.1/x", "https://192.168.1.1/x", "https://169.254.169.254/latest",
            "https://100.64.0.1/x", "https://0.0.0.0/x", "https://[::1]/x", "https://[fd00::1]/x", "https://[fe80::1]/x",
            "https://[::ffff:127.0.0.1]/x", "https://2130706433/x", "https://127.1/x", "https://0x7f.1/x", "https://0177.0.0.1/x",
            "https://localhost./x", "https://[fe80::1%25eth0]/x", "https://[64:ff9b::7f00:1]/x", "https://224.0.0.1/x",
            "https://[2002:7f00:1::]/x", "https://198.18.0.1/x", "https://push.example.net/" + String(repeating: "a", count: 2_100), "not a url", "",
            "https://vm/x", "https://ip6-localhost/x", "https://localhost.localdomain/x", "https://[::ffff:0:7f00:1]/x", "https://[64:ff9b:1::7f00:1]/x",
            "https://[100::1]/x", "https://192.0.2.1/x", "https://198.51.100.1/x", "https://[2001:db8::1]/x", "https://push.example.net:0/x",
            "https://push.example.net:99999/x", "https://push.example.net/a\r\nX-Evil: 1", "https://push.example.net/a b", "https://push.example.net/a\tb",
            // A port that overflows (URLComponents reads none), ranges no push service is in, names no push service has.
            "https://push.example.com:99999999999999999999/x", "http://127.0.0.1:18443000000000000000000/x", "https://push.example.com:+443/x",
            "https://[2001:2::1]/x", "https://[3fff::1]/x", "https://[fec0::1]/x", "https://[2001::1]/x", "https://192.88.99.1/x",
            "https://localhost\u{3002}com/x", "https://push.example.com/\u{200B}", "https://*.example.com/x", "https://-push.example.com/x",
            "https://" + String(repeating: "a", count: 300) + ".example.com/x", "https://push..example.com/x", "https://pu_sh.example.com/x",
            "https://xn--caf-dma.example/push",  // an internationalized name: no push service has one
        ] {
            #expect(WebPushEndpoint.validate(bad) == nil, "\(bad.prefix(60))")
        }
        #expect(WebPushEndpoint.validate("http://127.0.0.1:9999/push/x", allowLoopbackHTTP: true) != nil)
        #expect(WebPushEndpoint.validate("http://10.0.0.1:9999/push/x", allowLoopbackHTTP: true) == nil)
        #expect(WebPushEndpoint.validate("https://127.0.0.1/push/x", allowLoopbackHTTP: true) == nil, "loopback only over http, for tests")
    }
}
