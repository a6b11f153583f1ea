// swift-tools-version: 6.1
import PackageDescription
import Foundation

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let pipeWireIncludes = ["-I/usr/include/pipewire-0.3", "-I/usr/include/spa-0.2"]
/// GLib's headers, including its configuration header in the multiarch library directory.
let glibIncludes = ["-I/usr/include/glib-2.0"]
    + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? []).sorted()
    .map { "/usr/lib/\($0)/glib-2.0/include" }
    .filter { FileManager.default.fileExists(atPath: $0) }
    .map { "-I" + $0 }

let package = Package(
    name: "screenpub",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "screenpub", targets: ["screenpub"]),
        .executable(name: "screensub", targets: ["screensub"]),
        .executable(name: "screenrelay", targets: ["screenrelay"]),
        .library(name: "ScreenMedia", targets: ["ScreenMedia"]),
        .library(name: "ScreenCaptureX11", targets: ["ScreenCaptureX11"]),
        .library(name: "ScreenCapturePipeWire", targets: ["ScreenCapturePipeWire"]),
        .library(name: "ScreenCodec", targets: ["ScreenCodec"]),
        .library(name: "ScreenRecording", targets: ["ScreenRecording"]),
        .library(name: "ScreenWire", targets: ["ScreenWire"]),
        .library(name: "ScreenTransport", targets: ["ScreenTransport"]),
        .library(name: "ScreenTransportClient", targets: ["ScreenTransportClient"]),
        .library(name: "ScreenSession", targets: ["ScreenSession"]),
        // Fixtures for tests and for the benchmarks' package (Benchmarks/Package.swift).
        .library(name: "ScreenTesting", targets: ["ScreenTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        // Its client and frame handling, for the relay connection on a channel of screenpub's own (the socket's pacing).
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // System libraries: a module map and a header each, nothing else.
        .systemLibrary(
            name: "CX11", pkgConfig: "x11 xext xdamage xfixes xrandr",
            providers: [.apt(["libx11-dev", "libxext-dev", "libxdamage-dev", "libxfixes-dev", "libxrandr-dev"])]),
        .systemLibrary(name: "CVPX", pkgConfig: "vpx", providers: [.apt(["libvpx-dev"])]),
        .systemLibrary(name: "CAOM", pkgConfig: "aom", providers: [.apt(["libaom-dev"])]),
        .systemLibrary(name: "COpenH264", pkgConfig: "openh264", providers: [.apt(["libopenh264-dev"])]),
        .systemLibrary(name: "CYUV", providers: [.apt(["libyuv-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(
            name: "CAVFormat", pkgConfig: "libavformat libavcodec libavutil",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),
        // libpipewire-0.3's .pc file adds -D_REENTRANT, which SwiftPM refuses with a warning: its two header
        // directories (the same on every Debian architecture) are given here instead.
        .systemLibrary(name: "CPipeWire", providers: [.apt(["libpipewire-0.3-dev"])]),
        // libpipewire's loop macros and variadic SPA pod builders.
        .target(
            name: "CPipeWireShims", dependencies: ["CPipeWire"],
            cSettings: [.unsafeFlags(pipeWireIncludes)], linkerSettings: [.linkedLibrary("pipewire-0.3")]),
        // The ScreenCast portal (libportal, asynchronous on GLib) as one blocking call. Its header hides GLib, so
        // only this C target needs GLib's include directories (pkg-config's -pthread is refused by SwiftPM).
        .target(
            name: "CPortalShims", cSettings: [.unsafeFlags(glibIncludes)],
            linkerSettings: ["portal", "gio-2.0", "gobject-2.0", "glib-2.0"].map { .linkedLibrary($0) }),
        // A repaint asked of a Wayland compositor (a transparent wlr-layer-shell overlay), for compositors that send
        // screen-cast frames only when the screen changes.
        .target(name: "CWaylandShims", linkerSettings: [.linkedLibrary("wayland-client")]),
        // WHIP's media side: GStreamer's webrtcbin fed already-encoded frames. Its header hides GStreamer and GLib.
        .target(
            name: "CWHIPShims", cSettings: [.unsafeFlags(["-I/usr/include/gstreamer-1.0"] + glibIncludes)],
            linkerSettings: ["gstwebrtc-1.0", "gstapp-1.0", "gstrtp-1.0", "gstbase-1.0", "gstsdp-1.0", "gstreamer-1.0", "gobject-2.0", "glib-2.0"]
                .map { .linkedLibrary($0) }),
        // One shim target per C library, for what Swift cannot call directly (macros, variadics, process-wide
        // handlers); each links only its own library, so a module links only the C libraries it uses.
        .target(
            name: "CX11Shims", dependencies: ["CX11"],
            linkerSettings: [.linkedLibrary("X11"), .linkedLibrary("Xext")]),
        .target(name: "CVPXShims", dependencies: ["CVPX"], linkerSettings: [.linkedLibrary("vpx")]),
        .target(name: "CAOMShims", dependencies: ["CAOM"], linkerSettings: [.linkedLibrary("aom")]),
        .target(name: "COpenH264Shims", dependencies: ["COpenH264"], linkerSettings: [.linkedLibrary("openh264")]),
        .target(name: "COpusShims", dependencies: ["COpus"], linkerSettings: [.linkedLibrary("opus")]),
        // Linked into the test binary only (through ScreenTesting).
        .target(name: "CTestingShims"),
        .target(
            name: "CAVFormatShims", dependencies: ["CAVFormat"],
            linkerSettings: [.linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("avutil")]),

        .target(
            name: "ScreenMedia",
            swiftSettings: strictSwift),
        .target(
            name: "ScreenCaptureX11",
            dependencies: [
                "ScreenMedia", "CX11", "CX11Shims",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .target(
            name: "ScreenCapturePipeWire",
            dependencies: [
                "ScreenMedia", "CPipeWire", "CPipeWireShims", "CPortalShims", "CWaylandShims", "CYUV",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift + [.unsafeFlags(pipeWireIncludes.flatMap { ["-Xcc", $0] })]),
        .target(
            name: "ScreenCodec",
            dependencies: ["ScreenMedia", "CVPX", "CYUV", "CVPXShims", "CAOM", "CAOMShims", "COpenH264", "COpenH264Shims", "COpus", "COpusShims"],
            swiftSettings: strictSwift),
        .target(
            name: "ScreenRecording",
            dependencies: ["ScreenMedia", "CAVFormat", "CAVFormatShims"],
            swiftSettings: strictSwift),
        .target(
            name: "ScreenWire",
            dependencies: ["ScreenMedia"],
            swiftSettings: strictSwift),
        .target(
            name: "ScreenRelay",
            dependencies: [
                "ScreenMedia", "ScreenWire", "ScreenTransport", "ScreenRecording",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            resources: [.copy("Viewer")],
            swiftSettings: strictSwift),
        // WHIP (RFC 9725) into an SFU: the HTTP exchange here, the WebRTC media in CWHIPShims.
        .target(
            name: "ScreenWHIP", dependencies: ["ScreenMedia", "ScreenSession", "ScreenTransport", "ScreenTransportClient", "ScreenWire", "CWHIPShims",
                .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift),
        // The relay as a service (`screenrelay serve`): its options, their checks and RelayConfiguration, its
        // ServiceGroup. Apart from ScreenRelay, which screenpub embeds and which knows no command line.
        .target(
            name: "ScreenRelayService",
            dependencies: [
                "ScreenMedia", "ScreenRelay", "ScreenService", "ScreenTransportClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        // The relay's HTTP API as `screenrelay session|sessions|token|archive` call it: the commands, where they
        // find the relay and its secret (the relay's own settings), how they print its answers.
        .target(
            name: "ScreenRelayAdmin",
            dependencies: [
                "ScreenMedia", "ScreenRelay", "ScreenRelayService", "ScreenTransport", "ScreenTransportClient", "ScreenService", "ScreenWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift),
        .target(
            name: "ScreenService",
            dependencies: [
                "ScreenMedia",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        // What both sides of a relay connection share (the NIOCore of this package): the transport protocol, the
        // in-process transport, the session API's answers. The relay server links this and never the client part.
        .target(
            name: "ScreenTransport",
            dependencies: [
                "ScreenMedia", "ScreenWire",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        // The client part (the NIOPosix): the WebSocket transport on a channel of its own, the HTTP client, trust, the session API's client.
        .target(
            name: "ScreenTransportClient",
            dependencies: [
                "ScreenMedia", "ScreenWire", "ScreenTransport",
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "WSCore", package: "swift-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .target(
            name: "ScreenSession",
            dependencies: [
                "ScreenMedia", "ScreenWire", "ScreenTransport", "ScreenTransportClient", "ScreenRecording",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        // What screensub does, as a library: a recording read back, a live stream subscribed to (in a ServiceGroup
        // that Ctrl-C ends gracefully), its chat, its HLS followed, and the lines each prints. Apart from
        // ScreenSession, which publishers use too, because it decodes (ScreenCodec) and records (ScreenPipeline).
        .target(
            name: "ScreenSubscriber",
            dependencies: [
                "ScreenMedia", "ScreenCodec", "ScreenRecording", "ScreenSession", "ScreenTransport", "ScreenTransportClient", "ScreenWire",
                "ScreenPipeline", "ScreenService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        .target(
            name: "ScreenPipeline",
            dependencies: [
                "ScreenMedia", "ScreenRecording",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        // One share from start to stop, as a library: configuration, destinations by URL, control, reload.
        .target(
            name: "ScreenShare",
            dependencies: [
                "ScreenMedia", "ScreenPipeline", "ScreenCaptureX11", "ScreenCapturePipeWire", "ScreenCodec", "ScreenRecording",
                "ScreenTransport", "ScreenTransportClient", "ScreenSession", "ScreenRelay", "ScreenWire", "ScreenService", "ScreenWHIP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        .target(
            name: "ScreenTesting",
            dependencies: [
                "ScreenMedia", "ScreenCaptureX11", "ScreenCodec", "ScreenPipeline", "CX11", "CX11Shims",
                "CPipeWire", "CPipeWireShims", "CTestingShims", "ScreenTransportClient",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: strictSwift + [.unsafeFlags(pipeWireIncludes.flatMap { ["-Xcc", $0] })]),

        .executableTarget(
            name: "screenpub",
            dependencies: [
                "ScreenMedia", "ScreenCapturePipeWire", "ScreenShare", "ScreenService", "ScreenWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        .executableTarget(
            name: "screensub",
            dependencies: [
                "ScreenSubscriber", "ScreenService", "ScreenWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift),
        .executableTarget(
            name: "screenrelay",
            dependencies: [
                "ScreenRelayService", "ScreenRelayAdmin", "ScreenService", "ScreenWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        // Builds the man pages from the commands' own descriptions (packaging/deb/build.sh).
        .executableTarget(name: "manual-page", dependencies: ["ScreenService"], swiftSettings: strictSwift),
        // The benchmarks' tools (Benchmarks/*.sh): screenbench draws content and measures quality, relaybench drives
        // a relay. In this package, so that the benchmarks use the one release build and the tests' smoke runs of
        // the benchmark scripts the tests' own build.
        .executableTarget(
            name: "screenbench",
            dependencies: [
                "ScreenTesting", "ScreenMedia", "ScreenCodec", "ScreenRecording",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/screenbench",
            swiftSettings: strictSwift),
        .executableTarget(
            name: "relaybench",
            dependencies: [
                "ScreenMedia", "ScreenCodec", "ScreenRecording", "ScreenSession", "ScreenTransport", "ScreenTransportClient", "ScreenWire",
                "ScreenTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/relaybench",
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenWHIPTests",
            dependencies: ["ScreenWHIP", "ScreenMedia", "ScreenTransportClient", "ScreenCodec", "ScreenTesting", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSwift),
        .testTarget(name: "ScreenMediaTests", dependencies: ["ScreenMedia"], swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenPipelineTests", dependencies: ["ScreenMedia", "ScreenCodec", "ScreenPipeline", "ScreenTesting"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenTransportTests",
            dependencies: [
                "ScreenTransport", "ScreenWire", .product(name: "NIOCore", package: "swift-nio"), .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenServiceTests",
            dependencies: [
                "ScreenService", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenRelayAdminTests",
            dependencies: [
                "ScreenRelayAdmin", "ScreenRelayService", "ScreenRelay", "ScreenService", "ScreenTransport", "ScreenTransportClient", "ScreenWire",
                "ScreenMedia",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenRelayTests",
            dependencies: [
                "ScreenMedia", "ScreenWire", "ScreenRelay", "ScreenSession", "ScreenTransport", "ScreenTransportClient", "ScreenCodec", "ScreenTesting",
                "ScreenRecording",
                .product(name: "Crypto", package: "swift-crypto"),
                // swift-metrics' recording factory, for the figures a deployment's own factory gets (RelayMetricsTests).
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenShareTests",
            dependencies: [
                "ScreenMedia", "ScreenShare", "ScreenRelay", "ScreenTransport", "ScreenTransportClient", "ScreenSession", "ScreenWire", "ScreenCodec",
                "ScreenRecording",
                "ScreenCaptureX11", "ScreenTesting",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenRelayServiceTests",
            dependencies: ["ScreenRelayService", "ScreenRelay", "ScreenService", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenSubscriberTests",
            dependencies: [
                "ScreenSubscriber", "ScreenSession", "ScreenService", "ScreenMedia", "ScreenCodec", "ScreenRecording", "ScreenWire", "ScreenTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenTransportClientTests",
            dependencies: [
                "ScreenTransportClient", "ScreenTransport", "ScreenWire", "ScreenTesting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
        .testTarget(name: "ScreenSessionTests", dependencies: ["ScreenSession", "ScreenTransport", "ScreenWire", "ScreenTesting"], swiftSettings: strictSwift),
        // ScreenTesting: the random tests' seeded generator.
        .testTarget(name: "ScreenWireTests", dependencies: ["ScreenMedia", "ScreenWire", "ScreenTesting"], swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenCodecTests", dependencies: ["ScreenMedia", "ScreenCodec", "ScreenPipeline", "ScreenTesting"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenCaptureX11Tests",
            dependencies: ["ScreenMedia", "ScreenCaptureX11", "ScreenCodec", "ScreenPipeline", "ScreenTesting"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "ScreenCapturePipeWireTests",
            dependencies: ["ScreenMedia", "ScreenCapturePipeWire", "ScreenCodec", "ScreenPipeline", "ScreenTesting"],
            swiftSettings: strictSwift + [.unsafeFlags(pipeWireIncludes.flatMap { ["-Xcc", $0] })]),
        .testTarget(
            name: "ScreenRecordingTests",
            dependencies: ["ScreenMedia", "ScreenCodec", "ScreenRecording", "ScreenTesting"],
            swiftSettings: strictSwift),
        .testTarget(
            name: "CLITests",
            dependencies: [
                "ScreenMedia", "ScreenRecording", "ScreenCodec", "ScreenTesting", "ScreenSession", "ScreenTransport", "ScreenTransportClient", "ScreenWire",
                "ScreenRelay",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift),
    ]
)
