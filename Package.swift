// swift-tools-version:6.0
// The package is the architecture map:
//   SpoolCore       pure rules: ids, file names, item lifecycle, retry policy, outcomes (UploadOutcome,
//                   an enum) and their classes, one HTTP attempt as a state machine both transports
//                   drive (HTTPAttempt), the tus 1.0 protocol and S3 multipart uploads as ones their
//                   drivers follow (TusUpload, S3MultipartUpload: requests and records as actions, one
//                   start-over rule, StartOverBudget), index record codec,
//                   recovery planning, timetables in local time (the zone's
//                   offset injected). Imports no I/O (not even Foundation).
//   SpoolSystem     the one choke point for POSIX calls (openat, fsync, syncfs, renameat, xattrs, leases, inotify,
//                   flock; pread, close and the one write loop on other descriptors); a large folder listed on
//                   several threads where ext4's hash order allows (SplitListing, as many as CPUShare finds cores); typed errors (Errno);
//                   CSpoolShims holds the libc calls Swift's Glibc module does not export.
//   SpoolStore      the spool layout on disk and its transitions, the write-ahead index file,
//                   direct uploads' takes from incoming/ (no json, no sync until an attempt fails),
//                   start-up recovery's reading of the folders (a slice of ids at a time), setting
//                   aside and repairs (Spool+Recovery; it tells what it set aside, the engine logs it).
//   SpoolTransport  the transport protocol; the tus layer (TusTransport drives TusUpload over either transport);
//                   the S3 signing layer (S3MultipartAttempt drives S3MultipartUpload, signing each step);
//                   the request body written once for every transport (RequestBody,
//                   BodyReader, the daemon's one --limit-rate gate; --compress's deflate while it is read, GzipStream,
//                   through CZlib: the system zlib, pkg-config `zlib`, already loaded by libcurl); URLSession's driver of HTTPAttempt; the
//                   wall clock and the daemon's shared request rate under throttling (RequestPacer); body hashing
//                   through CCrypto (the system libcrypto, pkg-config `libcrypto`, already loaded by libcurl);
//                   a flooded connection found and aborted, a stalled upload told from a slow server,
//                   through SpoolSystem's TCPConnections.
//   SpoolCurlTransport  `--transport curl`: libcurl's driver of HTTPAttempt, its multi interface on its own thread,
//                   through CCurl (the system libcurl, pkg-config `libcurl`; typed shims for its variadic calls;
//                   libssl's message callback, which shows a server refusing the client certificate: TLSWatch).
//   SpoolEngine     the daemon loop wiring core, store and transport together; the one writer of the spool
//                   (uploads' part-log records included: their drivers ask, the loop performs them);
//                   start-up recovery's decisions (SpoolRecovery: plans, requeues or parks interrupted uploads, logs).
//   SpoolClient     the library product: a Swift program's `enqueue` (the CLI's own code path) and
//                   read-only `status`; it never uploads.
//   ArgumentKit     our small command-line parser (no package dependencies allowed); from the same
//                   specs, the help, the manual pages (mdoc) and the bash, zsh and fish completions.
//   SpoolCLI        one type per `spoold` subcommand; errors mapped to exit codes in one place; an
//                   option several commands have declared once, with its default (CommonOptions,
//                   RetryOptions, S3Options; SpoolCLITests checks it).
//   spoold          main.swift only (and the raised descriptor limit, before anything opens one).
//   spoold-docs     writes docs/man/ (scripts/readme-cli): the command pages and spoold-spool(5).
//   UploadReceiver  a loopback HTTP receiver with fault scripts, for tests and for trying spoold out; it inflates
//                   and checks gzip bodies.
//   spoold-bench    the benchmark's helpers: the bare URLSession loop, request timing, codec timings.
import PackageDescription

let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "spoold",
    products: [
        .executable(name: "spoold", targets: ["spoold"]),
        .executable(name: "spoold-receiver", targets: ["spoold-receiver"]),
        // For Swift programs that hand files to spoold (docs/library.md); the daemon stays the uploader.
        .library(name: "SpoolClient", targets: ["SpoolClient"]),
    ],
    targets: [
        // libm only: `rounded()` on Linux needs it when nothing else pulls in Glibc.
        .target(name: "SpoolCore", swiftSettings: swiftSettings, linkerSettings: [.linkedLibrary("m")]),
        // The few libc calls Swift's Glibc module does not export (syncfs, the F_SETLEASE lease).
        .target(name: "CSpoolShims"),
        .target(name: "SpoolSystem", dependencies: ["CSpoolShims"], swiftSettings: swiftSettings),
        .target(name: "SpoolStore", dependencies: ["SpoolCore", "SpoolSystem"], swiftSettings: swiftSettings),
        // Headers: Debian's libssl-dev (scripts/test and scripts/try install it).
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // Headers: Debian's zlib1g-dev (scripts/build-deps installs it).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "SpoolTransport", dependencies: ["CCrypto", "CZlib", "SpoolCore", "SpoolSystem"], swiftSettings: swiftSettings),
        // Headers: Debian's libcurl4-openssl-dev and libssl-dev (scripts/build-deps installs them).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .target(
            name: "SpoolCurlTransport", dependencies: ["CCurl", "SpoolCore", "SpoolTransport"],
            swiftSettings: swiftSettings),
        .target(
            name: "SpoolEngine",
            dependencies: ["SpoolCore", "SpoolSystem", "SpoolStore", "SpoolTransport"],
            swiftSettings: swiftSettings),
        .target(name: "SpoolClient", dependencies: ["SpoolCore", "SpoolStore", "SpoolSystem"], swiftSettings: swiftSettings),
        .target(name: "ArgumentKit", swiftSettings: swiftSettings),
        .target(
            name: "SpoolCLI",
            dependencies: [
                "ArgumentKit", "SpoolClient", "SpoolCore", "SpoolSystem", "SpoolStore", "SpoolTransport", "SpoolCurlTransport",
                "SpoolEngine",
            ],
            swiftSettings: swiftSettings),
        .executableTarget(name: "spoold", dependencies: ["SpoolCLI", "SpoolSystem"], swiftSettings: swiftSettings),
        .executableTarget(name: "spoold-docs", dependencies: ["SpoolCLI"], swiftSettings: swiftSettings),
        // Inflates gzip bodies (Content-Encoding: gzip) to check them, through the same zlib.
        .target(name: "UploadReceiver", dependencies: ["CZlib"], swiftSettings: swiftSettings),
        .executableTarget(name: "spoold-receiver", dependencies: ["UploadReceiver"], swiftSettings: swiftSettings),
        // The benchmark's baseline: a bare URLSession upload loop with no durability (scripts/bench).
        .executableTarget(
            name: "spoold-bench", dependencies: ["SpoolTransport", "SpoolCore", "SpoolStore", "SpoolSystem"], swiftSettings: swiftSettings),

        .target(
            name: "SpoolTestSupport",
            dependencies: ["SpoolCore", "SpoolSystem", "SpoolStore", "SpoolTransport", "SpoolEngine", "UploadReceiver"],
            path: "Tests/SpoolTestSupport",
            swiftSettings: swiftSettings),
        .testTarget(name: "SpoolCoreTests", dependencies: ["SpoolCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "SpoolTransportTests",
            dependencies: ["SpoolCore", "SpoolSystem", "SpoolTransport", "SpoolCurlTransport", "UploadReceiver"],
            swiftSettings: swiftSettings),
        .testTarget(name: "ArgumentKitTests", dependencies: ["ArgumentKit"], swiftSettings: swiftSettings),
        // spoold's own declarations: an option several commands have is one declaration.
        .testTarget(name: "SpoolCLITests", dependencies: ["ArgumentKit", "SpoolCLI"], swiftSettings: swiftSettings),
        // Uses the library as a client would: through the SpoolClient product's module alone.
        .testTarget(name: "SpoolClientTests", dependencies: ["SpoolClient"], swiftSettings: swiftSettings),
        .testTarget(name: "UploadReceiverTests", dependencies: ["UploadReceiver"], swiftSettings: swiftSettings),
        .testTarget(
            name: "SpoolStoreTests",
            dependencies: ["SpoolStore", "SpoolEngine", "SpoolTestSupport"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "SpoolEngineTests",
            dependencies: ["SpoolCore", "SpoolEngine", "SpoolTestSupport", "SpoolTransport", "SpoolCurlTransport", "UploadReceiver"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["SpoolTestSupport", "UploadReceiver", "SpoolStore"],
            swiftSettings: swiftSettings),
    ]
)
