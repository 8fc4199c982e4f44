import CCrypto
import SpoolSystem

/// Checks a client certificate and its key given at start (`--cert`, `--key`) the way libcurl's
/// OpenSSL will read them, so a wrong file is a usage error at once instead of every upload
/// failing its handshake for as long as the daemon runs.
public enum ClientCertificateFiles {
    /// Why `certificate` (PEM) and `key` (PEM, unencrypted; nil: in the certificate's file) cannot
    /// be used, or nil: each must be a readable regular file, parse, and the key must be the
    /// certificate's.
    public static func problem(certificate: String, key: String?) -> String? {
        if let problem = TrustedCertificates.regularFileProblem(certificate) { return "--cert '\(certificate)' \(problem)" }
        if let key, let problem = TrustedCertificates.regularFileProblem(key) { return "--key '\(key)' \(problem)" }
        defer { ERR_clear_error() }
        guard let parsed = readCertificate(certificate) else {
            return "--cert '\(certificate)' holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        }
        defer { X509_free(parsed) }
        let keyFile = key ?? certificate
        let keyOption = key == nil ? "--cert '\(certificate)' (without --key, the key is read from it)" : "--key '\(keyFile)'"
        switch readKey(keyFile) {
        case .encrypted:
            return "\(keyOption) holds an encrypted key: spoold needs it unencrypted (keep the file private: chmod 600)"
        case .missing:
            return "\(keyOption) holds no PEM private key (-----BEGIN PRIVATE KEY-----)"
        case .key(let privateKey):
            defer { EVP_PKEY_free(privateKey) }
            guard X509_check_private_key(parsed, privateKey) == 1 else {
                return "the key in \(keyOption) is not the key of the certificate in --cert '\(certificate)'"
            }
            return nil
        }
    }

    /// A warning when the certificate is outside its validity dates now (a server then refuses
    /// it; the clock may be the one that is wrong), or nil.
    public static func datesWarning(certificate: String) -> String? {
        defer { ERR_clear_error() }
        guard let parsed = readCertificate(certificate) else { return nil }
        defer { X509_free(parsed) }
        if X509_cmp_current_time(X509_get0_notAfter(parsed)) < 0 {
            return "the client certificate --cert '\(certificate)' has expired: servers will refuse it (or this machine's clock is wrong)"
        }
        if X509_cmp_current_time(X509_get0_notBefore(parsed)) > 0 {
            return "the client certificate --cert '\(certificate)' is not valid yet: servers will refuse it (or this machine's clock is wrong)"
        }
        return nil
    }


    /// The first PEM certificate in `path` (the client's own: libcurl presents the file's first).
    private static func readCertificate(_ path: String) -> OpaquePointer? {
        guard let bio = BIO_new_file(path, "r") else { return nil }
        defer { BIO_free(bio) }
        return PEM_read_bio_X509(bio, nil, nil, nil)
    }

    private enum KeyRead {
        case key(OpaquePointer)
        case encrypted
        case missing
    }

    /// The first PEM private key in `path`. OpenSSL asks the callback for a passphrase only for
    /// an encrypted key: it answers none (never a prompt on the terminal) and notes the question.
    private static func readKey(_ path: String) -> KeyRead {
        guard let bio = BIO_new_file(path, "r") else { return .missing }
        defer { BIO_free(bio) }
        var asked = false
        let key = withUnsafeMutablePointer(to: &asked) { flag in
            PEM_read_bio_PrivateKey(bio, nil, { _, _, _, flag in
                flag?.assumingMemoryBound(to: Bool.self).pointee = true
                return -1
            }, flag)
        }
        if let key { return .key(key) }
        return asked ? .encrypted : .missing
    }
}
