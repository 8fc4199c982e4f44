import CCurl
import SpoolCore

/// Turns a libcurl result into an outcome, with the classes `URLSessionTransport` gives the same
/// failures: nothing reached a server (refused, unresolved, TLS) is an outage; a failure after
/// the request went out is a retryable network error.
enum CurlErrorMapping {
    static func outcome(_ code: CURLcode, detail: String) -> UploadOutcome {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        switch code {
        case CURLE_COULDNT_CONNECT:
            return .failed(.connectionRefused)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .failed(.hostNotFound)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
             CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_INITFAILED:
            return .failed(.tlsHandshake(text))
        case CURLE_OPERATION_TIMEDOUT:
            return .failed(.idleTimeout)
        // A transfer under way fails with OUT_OF_MEMORY when a header line passes libcurl's
        // limit (its buffer refuses to grow; a real allocation failure would have shown sooner),
        // and with RECV_ERROR, saying so, when the whole head does.
        case CURLE_OUT_OF_MEMORY:
            return .failed(.answerHeadTooLarge)
        case CURLE_RECV_ERROR where detail.hasPrefix("Too large response headers"):
            return .failed(.answerHeadTooLarge)
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE, CURLE_SEND_FAIL_REWIND:
            return .failed(.connectionLost)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return .failed(.badResponse(text))
        default:
            return .failed(.unidentified(text, beforeSending: false))
        }
    }
}
