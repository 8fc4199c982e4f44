import SpoolCore
import XCTest

/// The rule that tells a refused client certificate from a lost connection, and its words.
final class ClientCertificateRefusalTests: XCTestCase {
    func testAlert_isReadFromOpenSSLsPackedCode_3and1_1() {
        // libcurl 7.88 with OpenSSL 3.0, TLS 1.3 and 1.2; OpenSSL 1.1's packing.
        XCTAssertEqual(ClientCertificateRefusal.alert(inOpenSSLText:
            "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0"), 116)
        XCTAssertEqual(ClientCertificateRefusal.alert(inOpenSSLText: "OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca"), 48)
        XCTAssertEqual(ClientCertificateRefusal.alert(inOpenSSLText: "OpenSSL/3.0.19: error:0A000410:SSL routines::sslv3 alert handshake failure"), 40)
        XCTAssertEqual(ClientCertificateRefusal.alert(inOpenSSLText: "error:14094415:SSL routines:ssl3_read_bytes:sslv3 alert certificate expired"), 45)
        // Not an alert about the client certificate, not an SSL error, not a code at all.
        XCTAssertNil(ClientCertificateRefusal.alert(inOpenSSLText: "OpenSSL/3.0.19: error:0A000086:SSL routines::certificate verify failed"))
        XCTAssertNil(ClientCertificateRefusal.alert(inOpenSSLText: "error:0A0003FC:SSL routines::sslv3 alert bad record mac"))
        XCTAssertNil(ClientCertificateRefusal.alert(inOpenSSLText: "error:8000006F:system library::Connection refused"))
        XCTAssertNil(ClientCertificateRefusal.alert(inOpenSSLText: "getpeername() failed with errno 107: Transport endpoint is not connected"))
        XCTAssertNil(ClientCertificateRefusal.alert(inOpenSSLText: "error:0A00045C"))
    }

    func testReason_namesTheAlertAndWhatToCheck() {
        let none = TLSHandshakeNote(certificateRequested: true)
        let shown = TLSHandshakeNote(certificateRequested: true, certificatePresented: true)
        XCTAssertEqual(
            ClientCertificateRefusal.reason(alert: 116, handshake: none),
            "the server requires a client certificate (TLS alert 116 certificate_required): give one with --cert and --key (--transport curl)")
        XCTAssertEqual(
            ClientCertificateRefusal.reason(alert: 45, handshake: shown),
            "the server says the client certificate has expired (TLS alert 45 certificate_expired): renew --cert")
        XCTAssertTrue(ClientCertificateRefusal.reason(alert: 48, handshake: nil)?.contains("TLS alert 48 unknown_ca") == true)
        XCTAssertTrue(ClientCertificateRefusal.reason(alert: 42, handshake: shown)?.contains("TLS alert 42 bad_certificate") == true)
        XCTAssertNil(ClientCertificateRefusal.reason(alert: 40, handshake: nil), "handshake_failure alone says nothing of certificates")
        XCTAssertNotNil(ClientCertificateRefusal.reason(alert: 40, handshake: none))
        XCTAssertNil(ClientCertificateRefusal.reason(alert: nil, handshake: nil))
        XCTAssertNil(ClientCertificateRefusal.reason(alert: nil, handshake: TLSHandshakeNote(certificatePresented: true)), "not asked")
        XCTAssertTrue(ClientCertificateRefusal.reason(alert: nil, handshake: shown)?.contains("it refuses the certificate") == true)
        XCTAssertNil(ClientCertificateRefusal.reason(alert: nil, handshake: TLSHandshakeNote(certificateRequested: true, certificateTaken: true)))
    }

    /// OpenSSL's message callback in order: TLS 1.3 takes the certificate with a session ticket
    /// (its Finished comes before the client's certificate); TLS 1.2 with its Finished.
    func testHandshakeNote_readsTheServersMessages() {
        var tls13 = TLSHandshakeNote()
        for (type, message) in [(22, 2), (22, 8), (22, 13), (22, 11), (22, 15), (22, 20)] {
            tls13.received(version: 0x0304, contentType: type, first: UInt8(message), second: 0)
        }
        XCTAssertTrue(tls13.certificateRequested)
        XCTAssertFalse(tls13.certificateTaken, "TLS 1.3's server Finished comes before the client's certificate")
        tls13.received(version: 0x0304, contentType: 21, first: 2, second: 116)
        XCTAssertEqual(tls13.alert, 116)
        tls13.received(version: 0x0304, contentType: 21, first: 2, second: 48)
        XCTAssertEqual(tls13.alert, 116, "the first fatal alert stands")
        tls13.received(version: 0x0304, contentType: 22, first: 4, second: 0)
        XCTAssertTrue(tls13.certificateTaken)

        var tls12 = TLSHandshakeNote()
        tls12.received(version: 0x0303, contentType: 21, first: 1, second: 0)
        XCTAssertNil(tls12.alert, "a warning (close_notify) is no refusal")
        tls12.received(version: 0x0303, contentType: 22, first: 20, second: 0)
        XCTAssertTrue(tls12.certificateTaken)
        tls12.received(version: 0x0303, contentType: 256, first: 22, second: 3)
        XCTAssertFalse(tls12.certificateRequested, "a record's header is not a message")
    }
}
