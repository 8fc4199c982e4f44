import SpoolCore
import SpoolStore

/// A part log's records written and made durable at once, as the engine does in two steps
/// (`write`, then the worker makes its `SyncWork`): the store's tests are about the log, not
/// about where its syncs are made.
extension PartLog {
    func begin(_ upload: PartLogCodec.State) throws { try write(.s3Upload(upload)).perform() }
    func begin(_ upload: TusUploadRecord) throws { try write(.tusUpload(upload)).perform() }
    func record(part number: Int, etag: String) throws { try write(.part(number, etag: etag)).perform() }
}
