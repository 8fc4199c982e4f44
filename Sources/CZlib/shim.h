#ifndef SPOOLD_CZLIB_SHIM_H
#define SPOOLD_CZLIB_SHIM_H

// zlib, which libcurl already loads, for `--compress gzip` (deflate while a body streams) and the
// test receiver's inflating. The headers come from Debian's zlib1g-dev (scripts/build-deps
// installs it); without them the build stops here.
#include <zlib.h>

// deflateInit2 and inflateInit2 are macros Swift cannot call (they pass zlib's version and the
// stream's size): one wrapper each, for the gzip wrapper (windowBits 15 + 16, RFC 1952).

/// A gzip member at `level` (1-9), zlib's default memory (memLevel 8: 256 KiB of state).
static inline int spoold_deflate_init_gzip(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/// gzip only (no zlib or raw stream taken for one).
static inline int spoold_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}

#endif
