// swift-tools-version: 6.1
// The benchmarks' own package (as swift-nio keeps its benchmarks), so that building screenpub does not build
// them: `swift build --package-path Benchmarks -c release` (Benchmarks/*.sh do it).
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "screenpub-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "screenpub", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .executableTarget(
            name: "screenbench",
            dependencies: [
                .product(name: "ScreenTesting", package: "screenpub"),
                .product(name: "ScreenMedia", package: "screenpub"),
                .product(name: "ScreenCodec", package: "screenpub"),
                .product(name: "ScreenRecording", package: "screenpub"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "screenbench",
            swiftSettings: strictSwift),
        .executableTarget(
            name: "relaybench",
            dependencies: [
                .product(name: "ScreenMedia", package: "screenpub"),
                .product(name: "ScreenCodec", package: "screenpub"),
                .product(name: "ScreenRecording", package: "screenpub"),
                .product(name: "ScreenSession", package: "screenpub"),
                .product(name: "ScreenTransport", package: "screenpub"),
                .product(name: "ScreenTransportClient", package: "screenpub"),
                .product(name: "ScreenWire", package: "screenpub"),
                .product(name: "ScreenTesting", package: "screenpub"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "relaybench",
            swiftSettings: strictSwift),
    ]
)
