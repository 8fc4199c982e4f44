#ifndef SPOOLD_CCRYPTO_SHIM_H
#define SPOOLD_CCRYPTO_SHIM_H

// OpenSSL's libcrypto, which libcurl and FoundationNetworking already load, for bulk SHA-256
// (S3 payload hashes, Content-Digest): its EVP interface uses the CPU's SHA extensions, about
// 7x spoold's own Swift SHA-256 on the test machine. The headers come from Debian's libssl-dev
// (`apt-get install libssl-dev`); without them the build stops here.
#include <openssl/evp.h>
// PEM certificates, to check a `--cacert` bundle at start the way libcurl's OpenSSL reads it.
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/err.h>

#endif
