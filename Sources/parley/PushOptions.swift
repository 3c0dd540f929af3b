import ArgumentParser
import Foundation
import ParleyServer

/// `parley serve`'s notification options (docs/deployment.md "Notifications").
struct PushOptions: ParsableArguments {
    @Option(help: "The VAPID contact push services may write to: mailto:… or https://…. [env: PARLEY_VAPID_SUBJECT]")
    var vapidSubject: String?
    @Option(
        help:
            "The VAPID key file (PEM, made on first start, mode 0600). [env: PARLEY_VAPID_KEY_FILE] (default: beside the SQLite database; in the database for PostgreSQL)"
    )
    var vapidKeyFile: String?
    @Flag(help: "Tests and local development only: accept http:// Web Push endpoints on loopback addresses.")
    var pushAllowLoopback = false
    @Option(help: "APNs: the .p8 key file of an Apple Developer key. [env: PARLEY_APNS_KEY_FILE]")
    var apnsKeyFile: String?
    @Option(help: "APNs: the key's id. [env: PARLEY_APNS_KEY_ID]")
    var apnsKeyId: String?
    @Option(help: "APNs: the team id. [env: PARLEY_APNS_TEAM_ID]")
    var apnsTeamId: String?
    @Option(help: "APNs: the app's bundle id (apns-topic). [env: PARLEY_APNS_TOPIC]")
    var apnsTopic: String?
    @Option(help: "APNs: the service's base URL for production devices (a stand-in in tests). [env: PARLEY_APNS_URL]")
    var apnsUrl: String?
    @Option(help: "APNs: the base URL for development (sandbox) devices. [env: PARLEY_APNS_SANDBOX_URL]")
    var apnsSandboxUrl: String?
    @Option(help: "APNs: extra PEM certificates to trust for the APNs URLs (a test stand-in's). [env: PARLEY_APNS_TRUST]")
    var apnsTrust: String?

    /// The push settings; `sqlitePath` is the database file when not PostgreSQL.
    func configuration(_ settings: Settings, sqlitePath: String?) throws -> PushConfiguration {
        var push = PushConfiguration()
        if let subject = vapidSubject ?? settings.string("PARLEY_VAPID_SUBJECT") {
            guard subject.hasPrefix("mailto:") || subject.hasPrefix("https://"), subject.count <= 256 else {
                throw ValidationError("vapid-subject must be a mailto: or https:// address.")
            }
            push.vapidSubject = subject
        }
        push.vapidKeyFile = vapidKeyFile ?? settings.string("PARLEY_VAPID_KEY_FILE") ?? sqlitePath.map { $0 + ".vapid.pem" }
        push.allowLoopbackEndpoints = pushAllowLoopback
        let apnsParts = [
            apnsKeyFile ?? settings.string("PARLEY_APNS_KEY_FILE"), apnsKeyId ?? settings.string("PARLEY_APNS_KEY_ID"),
            apnsTeamId ?? settings.string("PARLEY_APNS_TEAM_ID"), apnsTopic ?? settings.string("PARLEY_APNS_TOPIC"),
        ]
        let given = apnsParts.compactMap { $0 }
        if !given.isEmpty {
            guard given.count == 4, let keyFile = apnsParts[0], let keyID = apnsParts[1], let teamID = apnsParts[2], let topic = apnsParts[3] else {
                throw ValidationError("APNs needs all four of apns-key-file, apns-key-id, apns-team-id and apns-topic.")
            }
            guard FileManager.default.isReadableFile(atPath: keyFile) else { throw ValidationError("apns-key-file '\(keyFile)' cannot be read.") }
            var apns = APNsConfiguration(keyFile: keyFile, keyID: keyID, teamID: teamID, topic: topic)
            for (value, apply) in [
                (apnsUrl ?? settings.string("PARLEY_APNS_URL"), { (url: String) in apns.productionURL = url }),
                (apnsSandboxUrl ?? settings.string("PARLEY_APNS_SANDBOX_URL"), { (url: String) in apns.sandboxURL = url }),
            ] {
                guard let value else { continue }
                guard let url = URL(string: value), url.scheme == "https", url.host != nil else {
                    throw ValidationError("APNs URLs must be https://host[:port], not '\(value)'.")
                }
                apply(value)
            }
            apns.trustedCertificatesFile = apnsTrust ?? settings.string("PARLEY_APNS_TRUST")
            push.apns = apns
        }
        return push
    }
}
