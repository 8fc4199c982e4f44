import CCurl
import SpoolCore

extension TransferError {
    /// What a libcurl result says, in the attempt's terms (`HTTPAttempt` decides what it means);
    /// `detail` is libcurl's error buffer. A server's alert about the client certificate is
    /// taken from it whatever the code (a failed handshake, a failed read after it).
    init(curl code: CURLcode, detail: String) {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        if let alert = ClientCertificateRefusal.alert(inOpenSSLText: detail) {
            self = .tlsAlert(alert, text)
            return
        }
        switch code {
        case CURLE_COULDNT_CONNECT: self = .connectionRefused
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: self = .hostNotFound
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_INITFAILED:
            self = .tlsHandshake(text)
        case CURLE_OPERATION_TIMEDOUT: self = .timedOut
        // A transfer under way fails with OUT_OF_MEMORY when a header line passes libcurl's
        // limit (its buffer refuses to grow; a real allocation failure would have shown sooner),
        // and with RECV_ERROR, saying so, when the whole head does.
        case CURLE_OUT_OF_MEMORY: self = .answerHeadTooLarge
        case CURLE_RECV_ERROR where detail.hasPrefix("Too large response headers"): self = .answerHeadTooLarge
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SEND_FAIL_REWIND: self = .connectionLost
        case CURLE_HTTP2_STREAM: self = .streamReset
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2: self = .badResponse(text)
        default: self = .unnamed(text)
        }
    }
}
