import CCurl
import SpoolCore
import Synchronization

/// What each hop's new TLS connection showed of its handshake (`TLSHandshakeNote`), as OpenSSL
/// reports it: libcurl hands every new connection's SSL_CTX to `contextCallback`
/// (CURLOPT_SSL_CTX_FUNCTION), which puts OpenSSL's message callback on it with the hop's slot
/// number as its argument.
///
/// A connection outlives its hop in libcurl's cache, and its callback keeps the number it was
/// given: so the callback gets a number, never a pointer, and a number whose hop has ended
/// (`close`) is ignored. A reused connection has no handshake, and its hop no note.
enum TLSWatch {
    private static let notes = Mutex<[Int: TLSHandshakeNote]>([:])
    private static let serials = Atomic<Int>(0)

    /// A slot for one hop's handshake; `presenting`: a client certificate is configured.
    static func open(presenting: Bool) -> Int {
        let serial = serials.add(1, ordering: .relaxed).newValue
        notes.withLock { $0[serial] = TLSHandshakeNote(certificatePresented: presenting) }
        return serial
    }

    /// The hop's note, if a handshake was seen for it; its slot is gone afterwards.
    static func close(_ serial: Int) -> TLSHandshakeNote? {
        let note = notes.withLock { $0.removeValue(forKey: serial) }
        guard let note, note.certificateRequested || note.alert != nil else { return nil }
        return note
    }

    /// CURLOPT_SSL_CTX_FUNCTION, with the hop's slot number as CURLOPT_SSL_CTX_DATA.
    static let contextCallback: curl_ssl_ctx_callback = { _, context, slot in
        if let context { spoold_ssl_ctx_watch(context, TLSWatch.messageCallback, slot) }
        return CURLE_OK
    }

    /// OpenSSL's message callback: every message of the connection, records' headers included,
    /// so anything but the server's alerts and handshake messages returns at once.
    private static let messageCallback: spoold_tls_message_callback = { written, version, contentType, bytes, length, _, slot in
        guard written == 0, contentType == TLSHandshakeNote.alertRecord || contentType == TLSHandshakeNote.handshakeRecord,
              let bytes, length > 0, let slot
        else { return }
        let first = bytes.load(as: UInt8.self)
        let second: UInt8? = length > 1 ? bytes.load(fromByteOffset: 1, as: UInt8.self) : nil
        let serial = Int(bitPattern: slot)
        notes.withLock { notes in
            notes[serial]?.received(version: Int(version), contentType: Int(contentType), first: first, second: second)
        }
    }
}
