/// What a tus server offers, as its answer to `OPTIONS` said (tus 1.0 "Core Protocol", OPTIONS):
/// the protocol versions it speaks, its extensions, its checksum algorithms and its largest upload.
///
/// Learned once per daemon start and endpoint, then kept (`TusTransport`); forgotten after an
/// attempt that fails, so the next one asks again (a server replaced or reconfigured meanwhile).
public struct TusCapabilities: Equatable, Sendable {
    /// `Tus-Version`, lower-cased.
    public var versions: [String]
    /// `Tus-Extension`, lower-cased (`creation`, `creation-with-upload`, `termination`, `checksum`...).
    public var extensions: Set<String>
    /// `Tus-Checksum-Algorithm`, lower-cased.
    public var checksumAlgorithms: [String]
    /// `Tus-Max-Size`: the largest upload the server takes, in bytes.
    public var maximumSize: Int64?
    /// Whether the server answered OPTIONS (false: it did not, with a 4xx, and the core protocol
    /// with `creation` is assumed: the only way to create an upload).
    public var probed: Bool

    public init(versions: [String], extensions: Set<String>, checksumAlgorithms: [String] = [], maximumSize: Int64? = nil, probed: Bool = true) {
        (self.versions, self.extensions, self.checksumAlgorithms) = (versions, extensions, checksumAlgorithms)
        (self.maximumSize, self.probed) = (maximumSize, probed)
    }

    /// The version spoold speaks.
    public static let version = "1.0.0"

    /// From a 2xx answer to OPTIONS. A server that names no version is taken to speak 1.0.0
    /// (the spec makes `Tus-Version` a MUST, but some proxies drop it; every later request is
    /// checked by the server anyway through `Tus-Resumable`).
    public init(answer tus: TusHeaders?) {
        let tus = tus ?? TusHeaders()
        let versions = tus.list(.version)
        self.init(
            versions: versions.isEmpty ? [TusCapabilities.version] : versions, extensions: Set(tus.list(.extensions)),
            checksumAlgorithms: tus.list(.checksumAlgorithms), maximumSize: tus.bytes(.maximumSize), probed: true)
    }

    /// A server that did not answer OPTIONS (4xx): the core protocol and `creation`, nothing else.
    public static let assumed = TusCapabilities(versions: [version], extensions: ["creation"], probed: false)

    /// What an answer to OPTIONS says the server offers, for an upload and a termination alike:
    /// its headers (2xx); `assumed` for a server that does not serve OPTIONS (a final 4xx: 404,
    /// 405...); nil when the answer says nothing of the server, which is then the outcome: the
    /// credentials refused (401, 403, 407: a token-protected server offers nothing to a request
    /// without it; taken for "no termination", a termination owed was dropped), or a throttled,
    /// timed-out or failing server (429, 408, 5xx).
    public static func offered(answering answer: HTTPAnswer) -> TusCapabilities? {
        switch answer.status {
        case 200..<300: return TusCapabilities(answer: answer.tus)
        case 401, 403, 407: return nil
        case 400..<500 where answer.class == .final: return .assumed
        default: return nil
        }
    }

    public var speaksVersion: Bool { versions.contains(TusCapabilities.version) }
    public var creation: Bool { extensions.contains("creation") }
    public var creationWithUpload: Bool { extensions.contains("creation-with-upload") }
    public var termination: Bool { extensions.contains("termination") }

    /// The checksum each PATCH carries (`Upload-Checksum`), when the server offers the `checksum`
    /// extension with an algorithm spoold computes: sha256 before sha1.
    public var checksum: TusChecksum? {
        guard extensions.contains("checksum") else { return nil }
        return TusChecksum.allCases.first { checksumAlgorithms.contains($0.rawValue) }
    }

    /// For the log: `creation, creation-with-upload, termination; checksum sha1`.
    public var summary: String {
        let names = extensions.sorted().joined(separator: ", ")
        let said = probed ? (names.isEmpty ? "no extensions" : names) : "no answer to OPTIONS: creation assumed"
        return said + (checksum.map { "; Upload-Checksum \($0.rawValue)" } ?? "")
    }
}

/// The checksum algorithms of the tus `checksum` extension spoold computes, in the order it
/// prefers them.
public enum TusChecksum: String, Sendable, CaseIterable {
    case sha256
    case sha1
}
