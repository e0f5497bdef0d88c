// swift-tools-version:6.0
import PackageDescription

// No package dependencies: these machines cannot fetch them. C libraries come from Debian through
// systemLibrary targets; every one of them is imported with `internal import` so C never leaks upward.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Roost",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "roost", targets: ["roost"]),
        .executable(name: "roost-bench", targets: ["roost-bench"]),
        .library(name: "RoostXMPP", targets: ["RoostXMPP"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CExpat", pkgConfig: "expat", providers: [.apt(["libexpat1-dev"])]),
        .systemLibrary(name: "CGLib", pkgConfig: "glib-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .systemLibrary(name: "CResolv"),
        .systemLibrary(name: "CSystem"),
        .systemLibrary(name: "COMEMO", pkgConfig: "libomemo-c", providers: [.apt(["libomemo-c-dev"])]),
        // Agent-only C libraries are not linked: each of these modules forwards the functions Roost calls to the
        // library opened with dlopen on first use (CLoader), so a command that only reads the archive does not
        // load them (docs/performance-history.md, "Start-up"). Headers: libcurl4-openssl-dev, libnotify-dev,
        // libgdk-pixbuf-2.0-dev, libsoup-3.0-dev (`roost serve`: the HTTP server; see docs/serve.md for why libsoup).
        .target(name: "CLoader"),
        .target(name: "CCurl", dependencies: ["CLoader"]),
        // GObject and GIO, which only libnotify, libsoup and gdk-pixbuf users call, are opened the same way.
        .target(name: "CGObject", dependencies: ["CLoader", "CGLib"]),
        .target(name: "CNotify", dependencies: ["CLoader", "CGLib", "CGObject"]),
        .target(name: "CGdkPixbuf", dependencies: ["CLoader", "CGLib", "CGObject"]),
        .target(name: "CSoup", dependencies: ["CLoader", "CGLib", "CGObject"]),
        // The archive's stored stanzas (`messages.raw`), compressed with a built-in dictionary (SchemaV12).
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),

        // What every layer shares and nothing else: the one date codec and the one escaper of foreign text, the one
        // process runner, the GLib thread, the deadline around blocking work.
        .target(name: "RoostCore", dependencies: ["CGLib", "CSystem"], swiftSettings: strict),
        .target(name: "RoostXMPP", dependencies: ["RoostCore", "COpenSSL", "CExpat", "CResolv"], swiftSettings: strict),
        .target(name: "RoostArchive", dependencies: ["RoostCore", "CSQLite", "COpenSSL", "CZstd", "CSystem"], swiftSettings: strict),
        // OMEMO device (libomemo-c with an OpenSSL crypto provider); keys in their own SQLite store.
        .target(name: "RoostOMEMO", dependencies: ["RoostCore", "COMEMO", "COpenSSL", "RoostArchive", "RoostXMPP"], swiftSettings: strict),
        // The one libcurl wrapper, for the notification sinks and for file transfers.
        .target(name: "RoostHTTP", dependencies: ["RoostCore", "CCurl"], swiftSettings: strict),
        .target(name: "RoostNotify", dependencies: ["RoostCore", "CNotify", "CGLib", "CCurl", "RoostHTTP"], swiftSettings: strict),
        .target(name: "RoostAgent", dependencies: ["RoostCore", "RoostXMPP", "RoostArchive", "RoostNotify", "RoostOMEMO", "RoostHTTP", "CGLib", "CNotify", "CCurl", "COpenSSL", "CResolv", "CSystem", "CGdkPixbuf"], swiftSettings: strict),
        // The web view: HTTP (libsoup) and its security; pages come from RoostArchive's HTML renderer.
        .target(name: "RoostServe", dependencies: ["RoostCore", "CSoup", "CSystem", "RoostArchive"], swiftSettings: strict),
        // Linked by the toolchain's lld with packed relative relocations (DT_RELR, glibc ≥ 2.36): the loader
        // reads 16 KB of relocations at start instead of 2 MB (docs/performance-history.md, "Start-up").
        .executableTarget(name: "roost", dependencies: ["RoostCore", "RoostAgent", "RoostArchive", "RoostNotify", "RoostServe", "RoostXMPP"],
                          swiftSettings: strict,
                          linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"])]),
        .executableTarget(name: "roost-bench", dependencies: ["RoostCore", "RoostArchive", "RoostSynthetic", "RoostXMPP", "RoostNotify"], swiftSettings: strict),
        // Synthetic archives (seeded, mixed-language) for the benchmarks and the tests that need a large archive;
        // not part of roost.
        .target(name: "RoostSynthetic", dependencies: ["RoostArchive"], swiftSettings: strict),

        // Shared by the test targets only: the test servers (contrib/scripts/*-test-server), the slixmpp peer,
        // the roost binary, and the requirements switch (ROOST_TEST_REQUIRE_ALL).
        .target(name: "RoostTestSupport", dependencies: ["RoostXMPP", "CSystem"], swiftSettings: strict),

        .testTarget(name: "RoostXMPPTests", dependencies: ["RoostCore", "RoostXMPP", "COpenSSL", "RoostTestSupport"], swiftSettings: strict),
        .testTarget(name: "RoostNotifyTests", dependencies: ["RoostCore", "RoostNotify", "RoostTestSupport"], exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "RoostOMEMOTests", dependencies: ["RoostOMEMO", "RoostXMPP"], swiftSettings: strict),
        .testTarget(name: "RoostArchiveTests", dependencies: ["RoostCore", "RoostArchive", "RoostSynthetic", "RoostTestSupport"], exclude: ["Fixtures"], swiftSettings: strict),
        .testTarget(name: "RoostAgentTests", dependencies: ["RoostCore", "RoostAgent", "RoostXMPP", "RoostArchive", "RoostTestSupport"], swiftSettings: strict),
        // The fuzz targets' properties (Tests/Fuzz/Targets), replayed over their seeds and saved crashes; the
        // fuzzers themselves are built and run by contrib/scripts/fuzz (docs/fuzzing.md).
        .testTarget(name: "RoostFuzzTests", dependencies: ["RoostCore", "RoostXMPP", "RoostArchive", "RoostAgent"],
                    path: "Tests/Fuzz", exclude: ["corpus", "regressions"], swiftSettings: strict),
        // The real-client tier (Profanity, Finch, poezio, Gajim against the test Prosody): not an end-to-end suite
        // by name, so contrib/scripts/test runs it once, against Prosody only.
        .testTarget(name: "RoostClientTests", dependencies: ["roost", "RoostTestSupport", "RoostXMPP"], swiftSettings: strict),
        .testTarget(name: "RoostCLITests", dependencies: ["RoostCore", "RoostArchive", "RoostSynthetic", "roost", "RoostAgent", "RoostTestSupport", "RoostXMPP", "RoostServe"],
                    exclude: ["Fixtures"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
