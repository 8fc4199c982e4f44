import CCrypto
import SpoolSystem

/// Checks a private CA given at start (`--cacert`, `--capath`) the way libcurl's OpenSSL will
/// read it, so a wrong one is a usage error at once instead of every upload failing with "error
/// setting certificate file" for as long as the daemon runs.
public enum TrustedCertificates {
    /// Why `path` is not a PEM bundle with at least one certificate, or nil.
    public static func fileProblem(_ path: String) -> String? {
        if let problem = regularFileProblem(path) { return problem }
        guard let bio = BIO_new_file(path, "r") else { return "cannot be read by OpenSSL" }
        defer { BIO_free(bio) }
        var certificates = 0
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            certificates += 1
            X509_free(certificate)
        }
        ERR_clear_error()
        return certificates > 0 ? nil : "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
    }

    /// Why `path` is not a directory of hashed certificates (`c_rehash`: `<8 hex digits>.<n>`),
    /// or nil.
    public static func directoryProblem(_ path: String) -> String? {
        let fs = PosixFileSystem()
        let fd: FileDescriptor
        do { fd = try fs.open(path, relativeTo: nil, flags: [.readOnly, .directory, .followSymlinks], mode: 0) } catch {
            return "is not a directory spoold can read (\(error))"
        }
        defer { fs.close(fd) }
        guard let entries = try? fs.list(fd) else { return "cannot be listed" }
        let hashed = entries.contains { entry in
            let parts = entry.name.split(separator: ".")
            return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit) && parts[1].allSatisfy(\.isNumber)
        }
        return hashed ? nil : "holds no hashed certificate (<hash>.0, made by c_rehash or openssl rehash)"
    }

    /// Why `path` cannot be read as a regular file (followed if a link), or nil: the first check of
    /// every PEM file an operator names (`--cacert`, `--cert`, `--key`).
    static func regularFileProblem(_ path: String) -> String? {
        let fs = PosixFileSystem()
        let fd: FileDescriptor
        do { fd = try fs.open(path, relativeTo: nil, flags: [.readOnly, .nonBlocking, .followSymlinks], mode: 0) } catch {
            return "cannot be read (\(error))"
        }
        defer { fs.close(fd) }
        guard let status = try? fs.status(of: fd), status.type == .regular else { return "is not a regular file" }
        return nil
    }
}
