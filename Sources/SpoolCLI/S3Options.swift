import ArgumentKit
import Foundation
import SpoolCore
import SpoolEngine
import Synchronization

/// `--url s3://BUCKET/PREFIX` and the `--s3-*` options: the store's endpoint, region,
/// addressing style and credentials, resolved the way the AWS CLI and SDKs resolve them.
///
/// Credentials come from the environment or the shared credentials file, read once at start-up
/// and kept only in memory (never on the command line, in a json, the index or the log); error
/// messages name the variable, file or profile, never a value.
struct S3Options {
    static let specs: [OptionSpec] = [
        OptionSpec("s3-endpoint", valueName: "URL",
                   help: "With --url s3://...: the S3-compatible store's endpoint (scheme://host[:port]).",
                   defaultDescription: "$AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else https://s3.REGION.amazonaws.com"),
        OptionSpec("s3-region", valueName: "REGION", help: "With --url s3://...: the region requests are signed for.",
                   defaultDescription: "$AWS_REGION, $AWS_DEFAULT_REGION, else us-east-1"),
        partSize.spec,
        .flag("s3-path-style",
              help: "Address objects as ENDPOINT/BUCKET/KEY (automatic when the endpoint's host is an IP address or localhost) instead of BUCKET.host/KEY."),
        OptionSpec("s3-allow-header", kind: .repeatedValue, valueName: "NAME",
                   help: "With --url s3://...: an item's own header (sidecar, enqueue --header) that may be sent besides x-amz-meta-*, Content-Type and Content-Disposition, e.g. x-amz-storage-class or x-amz-tagging; a trailing * allows a prefix. x-amz-copy-source* never. See docs/guarantees.md 'Security model'."),
    ]
    static let partSize = DefaultedOption.bytes(
        "s3-part-size",
        help: "With --url s3://...: blobs larger than this go up as a multipart upload in parts of this size (\(ByteUnits.shortText(S3PartPlan.minimumPartSize))-\(ByteUnits.shortText(maximumPartSize)); K, M, G: powers of 1024), resumed after a crash or a failed attempt from SPOOL/parts/.",
        range: S3PartPlan.minimumPartSize...maximumPartSize, limits: "S3's part limits", default: defaultPartSize)

    var target: S3Target
    var endpoint: HTTPOrigin
    var region: String
    var pathStyle: Bool
    var credentials: AWSCredentials
    /// `--s3-part-size`: the multipart threshold and part size.
    var partSize: Int64
    /// Which of an item's own headers its upload may send (`--s3-allow-header`).
    var itemHeaders: S3ItemHeaderRule
    /// The shared credentials file and profile they were read from; nil: the environment.
    var credentialsFile: (path: String, profile: String)?

    /// Where the credentials came from, for the start-up log line.
    var credentialsSource: String { credentialsFile.map { "\($0.path) [\($0.profile)]" } ?? "the environment" }

    /// `host`: what `{host}` stands for.
    func urlTemplate(host: String) -> URLTemplate { target.urlTemplate(endpoint: endpoint, pathStyle: pathStyle, host: host) }
    var signer: SigV4Signer { SigV4Signer(credentials: credentials, region: region) }

    init(url: String, _ arguments: ParsedArguments, environment: [String: String], command: String) throws {
        do {
            target = try S3Target(parsing: url)
        } catch {
            throw ArgumentError("--url: \(error)", command: command)
        }
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let regionText = arguments.value("s3-region") ?? env("AWS_REGION") ?? env("AWS_DEFAULT_REGION") ?? "us-east-1"
        guard !regionText.isEmpty, regionText.utf8.count <= 64,
              regionText.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == UInt8(ascii: "-") })
        else { throw ArgumentError("the S3 region '\(regionText)' is not a region name (like us-east-1)", command: command) }
        region = regionText
        let endpointText = arguments.value("s3-endpoint") ?? env("AWS_ENDPOINT_URL_S3") ?? env("AWS_ENDPOINT_URL")
            ?? S3Target.defaultEndpoint(region: region)
        let afterScheme = endpointText.firstRange(of: "://").map { endpointText[$0.upperBound...] } ?? ""
        let path = afterScheme.drop { $0 != "/" }
        guard let origin = HTTPOrigin(endpointText), path.isEmpty || path == "/", !endpointText.contains("@") else {
            throw ArgumentError(
                "the S3 endpoint '\(endpointText)' is not an http:// or https:// URL of the form scheme://host[:port]",
                command: command)
        }
        endpoint = origin
        pathStyle = arguments.flag("s3-path-style") || S3Target.needsPathStyle(host: origin.host)
        partSize = try S3Options.partSize.value(in: arguments)
        do {
            itemHeaders = try S3ItemHeaderRule(allowing: arguments.values("s3-allow-header"))
        } catch {
            throw ArgumentError("--s3-allow-header \(error)", command: command)
        }
        (credentials, credentialsFile) = try S3Options.credentials(environment: environment, command: command)
    }

    static let defaultPartSize: Int64 = 16 << 20
    /// S3's largest part.
    static let maximumPartSize: Int64 = 5 << 30

    /// `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`), else the shared
    /// credentials file's profile.
    static func credentials(
        environment: [String: String], command: String
    ) throws -> (AWSCredentials, file: (path: String, profile: String)?) {
        func env(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        switch (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
        case let (id?, secret?):
            return (AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: env("AWS_SESSION_TOKEN")),
                    nil)
        case (_?, nil), (nil, _?):
            throw ArgumentError(
                "S3 credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together", command: command)
        case (nil, nil):
            break
        }
        let profile = env("AWS_PROFILE") ?? "default"
        let file = env("AWS_SHARED_CREDENTIALS_FILE") ?? (env("HOME").map { $0 + "/.aws/credentials" } ?? "~/.aws/credentials")
        return (try readCredentialsFile(file, profile: profile, command: command), (file, profile))
    }

    /// The profile's keys in a shared credentials file.
    static func readCredentialsFile(_ file: String, profile: String, command: String) throws -> AWSCredentials {
        let text: String
        switch OperatorFile.read(file) {
        case .text(let read): text = read
        case .unreadable:
            throw ArgumentError(
                "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put them in \(file) (profile [\(profile)]; AWS_SHARED_CREDENTIALS_FILE and AWS_PROFILE choose another)",
                command: command)
        case .tooLarge, .notUTF8:
            throw ArgumentError("S3 credentials file \(file): not UTF-8 text of at most \(SmallText.maximumBytes) bytes", command: command)
        }
        guard let keys = AWSCredentials.sharedFileProfile(text, profile: profile) else {
            throw ArgumentError("S3 credentials file \(file) has no profile [\(profile)]", command: command)
        }
        guard let id = keys["aws_access_key_id"], !id.isEmpty, let secret = keys["aws_secret_access_key"], !secret.isEmpty else {
            throw ArgumentError(
                "S3 credentials file \(file), profile [\(profile)]: needs aws_access_key_id and aws_secret_access_key",
                command: command)
        }
        let token = keys["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 }
        return AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: token)
    }

    /// For `S3SigningTransport`: reads the credentials file again when the store refuses the
    /// credentials, and returns them if they changed (saying so in the log). Nil for credentials
    /// from the environment, which cannot change under a running process.
    func credentialsRereader(log: EventLog) -> (@Sendable () -> AWSCredentials?)? {
        guard let (file, profile) = credentialsFile else { return nil }
        let last = Mutex(credentials)
        return {
            guard let fresh = try? S3Options.readCredentialsFile(file, profile: profile, command: "run") else { return nil }
            let changed = last.withLock { last in
                defer { last = fresh }
                return last != fresh
            }
            guard changed else { return nil }
            log.info("S3 credentials in \(file) [\(profile)] changed since they were read; the next attempt signs with them")
            return fresh
        }
    }

    /// One line for the start-up log: where uploads go and how, without any secret.
    var description: String {
        "S3 bucket \(target.bucket) at \(endpoint.scheme)://\(endpoint.host):\(endpoint.port), region \(region), "
            + "\(pathStyle ? "path-style" : "virtual-hosted") addressing, credentials from \(credentialsSource), "
            + "multipart above --s3-part-size \(ByteUnits.exactText(partSize))"
    }
}
