import SpoolCore
import SpoolStore
import SpoolSystem

/// Sidecars (`incoming/<name>.meta.json`): a producer's settings for its file, untrusted like
/// the file. One is taken only from the file's owner (or root, or the user spoold runs as), its
/// header values pass `HeaderRule`, and with an s3:// URL its headers are only those a producer
/// may decide (`S3ItemHeaderRule`). A sidecar that fails any of these sends its item to failed/
/// with the reason, unsent: nothing goes out with settings its owner did not give.
extension Engine {
    /// A sidecar read from incoming/: its name there, its bytes, its owner.
    struct SidecarFile {
        var name: String
        var bytes: [UInt8]
        var owner: UInt32
    }

    /// Reads the sidecar of incoming/`name`, if it has one.
    func readSidecar(of name: String) throws -> SidecarFile? {
        let sidecarName = name + SpoolFolder.sidecarSuffix
        guard let read = try spool.readIncomingSidecar(sidecarName, limit: SmallText.maximumBytes) else { return nil }
        return SidecarFile(name: sidecarName, bytes: read.bytes, owner: read.owner)
    }

    /// Applies `sidecar` to the metadata of incoming/`name`, or throws why the item goes to failed/.
    func apply(_ sidecar: SidecarFile, of name: String, to metadata: inout ItemMetadata) throws {
        let fileOwner = try spool.incomingStatus(name).owner
        if let refusal = SidecarOwnerRule.refusal(sidecar: sidecar.owner, file: fileOwner, daemon: Spool.effectiveUser) {
            throw MetadataError(refusal)
        }
        let parsed = try Sidecar.parse(sidecar.bytes)
        if let refusal = itemHeaderRefusal(parsed.headers) { throw MetadataError("sidecar \(refusal)") }
        if let type = parsed.contentType { metadata.contentType = type }
        metadata.headers = parsed.headers
        metadata.fields = parsed.fields
        metadata.url = parsed.url
    }

    /// Why an item may not send one of its own headers, or nil: with an s3:// URL, only those
    /// `configuration.s3ItemHeaders` allows (any valid header otherwise).
    func itemHeaderRefusal(_ headers: [String: String]) -> String? {
        configuration.s3ItemHeaders?.refusal(forHeaders: headers)
    }
}
