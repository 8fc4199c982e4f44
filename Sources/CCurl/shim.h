#ifndef SPOOLD_CCURL_SHIM_H
#define SPOOLD_CCURL_SHIM_H

// libcurl for spoold's `--transport curl`. The headers come from Debian's libcurl4-openssl-dev
// (`apt-get install libcurl4-openssl-dev`); without them the build stops here.
#include <curl/curl.h>
// libcurl's TLS library, OpenSSL's libssl (Debian's libssl-dev), for one thing: watching each
// connection's handshake (SSL_CTX_set_msg_callback from CURLOPT_SSL_CTX_FUNCTION), to tell a
// server that refuses the client certificate from a lost connection.
#include <openssl/ssl.h>

// curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic macros Swift cannot
// call: one typed wrapper per argument type we use.

static inline CURLcode spoold_curl_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode spoold_curl_setopt_ptr(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode spoold_curl_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

/// CURLOPT_READFUNCTION.
static inline CURLcode spoold_curl_setopt_read(CURL *easy, curl_read_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_READFUNCTION, callback);
}

/// CURLOPT_SEEKFUNCTION: libcurl rewinds the body when it re-sends on a fresh connection.
static inline CURLcode spoold_curl_setopt_seek(CURL *easy, curl_seek_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, callback);
}

/// CURLOPT_WRITEFUNCTION.
static inline CURLcode spoold_curl_setopt_write(CURL *easy, curl_write_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
}

/// CURLOPT_HEADERFUNCTION (same signature as the write callback).
static inline CURLcode spoold_curl_setopt_header(CURL *easy, curl_write_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, callback);
}

/// CURLOPT_SSL_CTX_FUNCTION: called with each new connection's SSL_CTX before its handshake.
static inline CURLcode spoold_curl_setopt_ssl_ctx(CURL *easy, curl_ssl_ctx_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, callback);
}

/// OpenSSL's message callback (every protocol message of the connection, both ways) and its
/// argument, on a connection's SSL_CTX (`SSL_CTX_set_msg_callback_arg` is a macro).
typedef void (*spoold_tls_message_callback)(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl, void *arg);
static inline void spoold_ssl_ctx_watch(void *ctx, spoold_tls_message_callback callback, void *arg) {
    SSL_CTX_set_msg_callback((SSL_CTX *)ctx, callback);
    SSL_CTX_set_msg_callback_arg((SSL_CTX *)ctx, arg);
}

static inline CURLcode spoold_curl_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode spoold_curl_getinfo_off_t(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode spoold_curl_getinfo_ptr(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode spoold_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

#endif
