import Foundation

/// The three browser engines the viewer pages are tested in, each as Debian 12 packages it: Chromium (Blink),
/// Firefox ESR (Gecko) and WebKitGTK (WebKit, the engine of Safari).
public enum BrowserEngine: String, CaseIterable, Sendable, CustomStringConvertible {
    case chromium
    case firefox
    case webKitGTK

    /// The decoders a browser is started with.
    public enum Decoders: Sendable {
        /// As the package installs it.
        case stock
        /// No AV1: Firefox with `media.av1.enabled` false; WebKitGTK with GStreamer's AV1, VP9 and VP8 decoders
        /// ranked out, so that it decodes H.264 alone, as an iPhone or a Mac without AV1 hardware does.
        case withoutAV1
    }

    public var description: String {
        switch self {
        case .chromium: "Chromium"
        case .firefox: "Firefox"
        case .webKitGTK: "WebKitGTK"
        }
    }

    /// The Debian packages that bring the engine and its driver.
    public var packages: [String] {
        switch self {
        case .chromium: ["chromium"]
        case .firefox: ["firefox-esr"]
        case .webKitGTK: ["libwebkit2gtk-4.1-0", "webkit2gtk-driver"]
        }
    }

    /// Why the engine cannot be started here (nil when it can): a test cancels with it.
    public var missing: String? {
        let found = switch self {
        case .chromium: HeadlessBrowser.executable != nil
        case .firefox: HeadlessFirefox.executable != nil
        case .webKitGTK: WebKitGTKBrowser.driverExecutable != nil && WebKitGTKBrowser.browserExecutable != nil
        }
        return found ? nil : "\(self) is not installed (apt-get install \(packages.joined(separator: " ")); scripts/install-deps.sh does)"
    }

    /// GStreamer's decoders of AV1, VP9 and VP8 ranked out: what WebKitGTK has left is H.264.
    public static let h264OnlyGStreamerRanks =
        "av1dec:NONE,dav1ddec:NONE,avdec_av1:NONE,vp9dec:NONE,avdec_vp9:NONE,vp8dec:NONE,avdec_vp8:NONE"

    /// Opens `url` in a new browser of this engine with `decoders` (``Decoders/withoutAV1`` is not offered by
    /// Chromium, which has no switch for it).
    public func open(_ url: String, decoders: Decoders = .stock) async throws -> any BrowserPage {
        switch (self, decoders) {
        case (.chromium, .stock): try await HeadlessBrowser(url: url)
        case (.chromium, .withoutAV1): throw HeadlessBrowser.Failure(description: "Chromium cannot be started without its AV1 decoder")
        case (.firefox, .stock): try await HeadlessFirefox(url: url)
        case (.firefox, .withoutAV1): try await HeadlessFirefox(url: url, preferences: ["media.av1.enabled": "false"])
        case (.webKitGTK, .stock): try await WebKitGTKBrowser(url: url)
        case (.webKitGTK, .withoutAV1): try await WebKitGTKBrowser(url: url, environment: ["GST_PLUGIN_FEATURE_RANK": Self.h264OnlyGStreamerRanks])
        }
    }
}
