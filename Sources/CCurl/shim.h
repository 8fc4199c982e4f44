#ifndef SPOOLD_CCURL_SHIM_H
#define SPOOLD_CCURL_SHIM_H

// libcurl for spoold's `--transport curl`. The headers come from Debian's libcurl4-openssl-dev
// (`apt-get install libcurl4-openssl-dev`); without them the build stops here.
#include <curl/curl.h>

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
