import Foundation
import ParleyBench

/// A real S3-compatible server for the tests: moto (`python3 -m moto.server`, PyPI's
/// `moto[server]`, which scripts/test installs) on a loopback port, started once per test process
/// on first use. A watchdog shell stops it once the test process is gone, however that ended.
/// Without moto the tests fail, saying how to install it: they never skip.
public enum MotoTestServer {
    /// A running server and credentials it takes.
    public struct Endpoint: Sendable {
        /// `http://127.0.0.1:PORT`.
        public let url: String
        public let accessKey: String
        public let secretKey: String
    }

    /// The shared server. It takes any credentials and checks no signature: moto's check rebuilds
    /// the query with `%2F` decoded to `/`, so it refuses every correctly signed listing of a
    /// prefix (AWS signs `prefix=blobs%2F`).
    public static func shared() async throws -> Endpoint {
        try await offCooperativePool { try plain.get() }
    }

    /// A second server that checks every request's signature (moto's IAM emulation, a user allowed
    /// `s3:*`), with that user's credentials. For requests without a `/` in a query value (above).
    public static func verifyingSignatures() async throws -> Endpoint {
        try await offCooperativePool { try verifying.get() }
    }

    private static let plain = Result { try start(verifyingSignatures: false) }
    private static let verifying = Result { try start(verifyingSignatures: true) }

    private static func start(verifyingSignatures: Bool) throws -> Endpoint {
        let check = try PostgresTestServer.runCapturing("python3", ["-c", "import moto.server, boto3"])
        guard check.status == 0 else {
            throw TestServerError(
                message: "moto is not installed, and the S3 tests need it: run scripts/test, which installs it, or "
                    + "python3 -m pip install 'moto[server]' (\(check.output.trimmingCharacters(in: .whitespacesAndNewlines)))")
        }
        let port = try LoopbackPort.reservable()
        let log = NSTemporaryDirectory() + "parley-test-moto-\(getpid())-\(port).log"
        // $0 port, $1 this process, $2 the log. The loop ends with this process (kill -0 fails)
        // or with moto; either way moto and its log go. SIGKILL: the shell and moto inherit the
        // test thread's signal mask, which blocks SIGTERM.
        // Its own stdio goes to /dev/null: holding the test process's output pipes open would keep
        // `swift test` from seeing the end of it, and so from reaping it, and kill -0 would go on
        // finding the unreaped process: nobody would ever end.
        let watchdog = """
            exec </dev/null >/dev/null 2>&1
            python3 -m moto.server -H 127.0.0.1 -p "$0" >"$2" 2>&1 &
            moto=$!
            while kill -0 "$1" 2>/dev/null && kill -0 $moto 2>/dev/null; do sleep 1; done
            kill -KILL $moto 2>/dev/null; wait $moto 2>/dev/null; rm -f "$2"
            """
        do {
            _ = try ChildProcess.spawnShell(watchdog, arguments: [String(port), String(getpid()), log])
        } catch {
            throw TestServerError(message: "cannot start moto: \(error)")
        }
        let url = "http://127.0.0.1:\(port)"
        let words: [Substring]
        do {
            let output = try PostgresTestServer.run("python3", ["-c", setupScript, url, verifyingSignatures ? "verify" : "open"])
            words = output.split(whereSeparator: \.isWhitespace)
            guard words.count == 2 else { throw TestServerError(message: "no access key came back") }
        } catch {
            let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(2000)
            throw TestServerError(message: "moto did not start on \(url): \(error)\nmoto's log:\n\(tail)")
        }
        unlink(log)  // moto goes on writing to it, unseen; it was there for a failed start
        return Endpoint(url: url, accessKey: String(words[0]), secretKey: String(words[1]))
    }

    /// Waits for moto to answer, then, when asked to verify, creates a user with an access key and
    /// turns on moto's checks (every request after that is signed and checked); prints the key.
    private static let setupScript = #"""
        import json, sys, time, urllib.request
        url, mode = sys.argv[1], sys.argv[2]
        for _ in range(300):
            try:
                urllib.request.urlopen(url + "/moto-api/", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        else:
            sys.exit("no answer from moto at " + url)
        if mode == "open":
            print("parley-test parley-test-secret")
            sys.exit(0)
        import boto3
        iam = boto3.client("iam", endpoint_url=url, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="parley")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        iam.put_user_policy(UserName="parley", PolicyName="s3", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="parley")["AccessKey"]
        request = urllib.request.Request(url + "/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"})
        urllib.request.urlopen(request)
        print(key["AccessKeyId"], key["SecretAccessKey"])
        """#
}
