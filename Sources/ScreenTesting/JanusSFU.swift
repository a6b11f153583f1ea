import Foundation
import ScreenMedia

/// A real SFU for WHIP tests and benchmarks: Debian's Janus 1.1 (VideoRoom) with a WHIP front
/// (Tests/Fixtures/janus-whip-front.py), in a network namespace of its own joined to this one by a veth pair.
/// Janus and libnice skip loopback interfaces, so the peers meet on the veth's addresses (10.77.N.1 here,
/// 10.77.N.2 in the namespace); nothing leaves the machine. Needs root (`ip netns`).
public final class JanusSFU: @unchecked Sendable {
    // @unchecked: the processes are replaced only by `stopJanus()`/`startJanus()`, which a test calls from one task.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        /// The machine cannot run it (no root, no network namespaces, Janus not installed): tests skip.
        public let cannotStart: Bool
    }

    /// The SFU's own network namespace.
    public let network: NetworkNamespace
    public var namespace: String { network.name }
    /// This side's address on the veth pair, and Janus's.
    public var localAddress: String { network.localAddress }
    public var sfuAddress: String { network.namespaceAddress }
    public let room = 1234
    public let token: String
    /// `whip+http://…`: what screenpub publishes to.
    public var whipURL: String { "whip+http://\(sfuAddress):8080/whip/\(room)" }
    /// The same room behind a front whose answers refuse the data channel (as an SFU without data channels does).
    public var whipNoDataURL: String { "whip+http://\(sfuAddress):8080/whip-nodata/\(room)" }
    public var janusURL: String { "http://\(sfuAddress):8088/janus" }
    private let directory: String
    private var janus: ChildProcess?
    private var front: ChildProcess?
    private let codec: String

    /// `codec`: what the room takes (`vp9` or `vp8`; `h264` for a room that refuses both).
    public init(codec: String = "vp9", token: String = "whip-test-token") async throws {
        guard getuid() == 0 else { throw Failure(description: "network namespaces need root", cannotStart: true) }
        guard access("/usr/bin/janus", X_OK) == 0 else {
            throw Failure(description: "Janus is not installed (apt-get install janus)", cannotStart: true)
        }
        self.codec = codec
        self.token = token
        do {
            network = try await NetworkNamespace(prefix: "spj")
        } catch let failure as NetworkNamespace.Failure {
            throw Failure(description: failure.description, cannotStart: failure.cannotStart)
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("janus-\(UUID().uuidString)").path
        do {
            try FileManager.default.createDirectory(atPath: directory + "/none", withIntermediateDirectories: true)
            try writeConfiguration()
            try await startJanus()
            front = try ChildProcess(
                "/sbin/ip",
                ["netns", "exec", namespace, "/usr/bin/python3", Self.fixture("janus-whip-front.py"), sfuAddress, "8080",
                 "http://127.0.0.1:8088/janus", String(room), token])
            guard try await eventually(20, { front?.outputSoFar.contains("listening") == true }) else {
                throw Failure(description: "the WHIP front did not start: \(front?.errorsSoFar ?? "")", cannotStart: false)
            }
        } catch {
            await stop()
            throw error
        }
    }

    private static func fixture(_ name: String) -> String { TestFixtures.directory + "/" + name }

    private func writeConfiguration() throws {
        let disabledPlugins = ["audiobridge", "duktape", "lua", "nosip", "recordplay", "sip", "streaming", "textroom", "videocall", "voicemail", "echotest"]
            .map { "libjanus_\($0).so" }.joined(separator: ",")
        let disabledTransports = ["mqtt", "nanomsg", "pfunix", "rabbitmq", "websockets"].map { "libjanus_\($0).so" }.joined(separator: ",")
        let files = [
            "janus.jcfg": """
                general: {
                    configs_folder = "\(directory)"
                    plugins_folder = "/usr/lib/x86_64-linux-gnu/janus/plugins"
                    transports_folder = "/usr/lib/x86_64-linux-gnu/janus/transports"
                    events_folder = "\(directory)/none"
                    loggers_folder = "\(directory)/none"
                    debug_level = 4
                    session_timeout = 60
                }
                media: {
                    rtp_port_range = "20000-20200"
                }
                nat: {
                    nice_debug = false
                }
                plugins: {
                    disable = "\(disabledPlugins)"
                }
                transports: {
                    disable = "\(disabledTransports)"
                }
                """,
            "janus.transport.http.jcfg": """
                general: {
                    json = "plain"
                    base_path = "/janus"
                    http = true
                    port = 8088
                    https = false
                }
                admin: {
                    admin_http = false
                }
                """,
            "janus.plugin.videoroom.jcfg": """
                general: {
                }
                room-\(room): {
                    description = "screenpub"
                    publishers = 3
                    bitrate = 4000000
                    fir_freq = 0
                    videocodec = "\(codec)"
                }
                """,
        ]
        for (name, text) in files { try text.write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8) }
    }

    /// Starts Janus (again) in the namespace and waits until its HTTP API answers.
    public func startJanus() async throws {
        let process = try ChildProcess("/sbin/ip", ["netns", "exec", namespace, "/usr/bin/janus", "-F", directory])
        janus = process
        let ready = try await eventually(20) { process.outputSoFar.contains("HTTP webserver started") }
        guard ready else { throw Failure(description: "Janus did not start: \(process.errorsSoFar.suffix(600))", cannotStart: false) }
    }

    /// Kills Janus (an SFU going away mid-share).
    public func stopJanus() async {
        janus?.signal(SIGKILL)
        _ = await janus?.wait(timeout: 10)
        janus = nil
    }

    /// A viewer through Janus (its VideoRoom forwarding the publisher to `port` here, decoded, starting from the
    /// keyframe Janus asks the publisher for): the pictures seen in `seconds`.
    public func watch(port: Int, codec: String = "vp9", seconds: Double) async throws -> [Picture] {
        let viewer = try startWatching(port: port, codec: codec, seconds: seconds)
        return Self.pictures(in: await viewer.wait(timeout: seconds + 40).standardOutput)
    }

    /// ``watch(port:codec:seconds:)`` running beside the caller; ``pictures(in:)`` reads what it printed.
    public func startWatching(port: Int, codec: String = "vp9", seconds: Double) throws -> ChildProcess {
        try ChildProcess(
            "/usr/bin/python3",
            [Self.fixture("janus-subscriber.py"), janusURL, String(room), localAddress, String(port), codec, String(seconds), "http://\(sfuAddress):8080"])
    }

    public static func pictures(in output: String) -> [Picture] {
        output.split(separator: "\n").compactMap { line in try? JSONDecoder().decode(Picture.self, from: Data(line.utf8)) }.filter { $0.width > 0 }
    }

    /// One picture a viewer decoded: its size, the mean colour of its centre, and when (Unix seconds).
    public struct Picture: Decodable, Sendable {
        public var width = 0
        public var height = 0
        public var r = 0
        public var g = 0
        public var b = 0
        public var time = 0.0
    }

    /// What the WHIP front logged so far (its requests, the DELETEs of resources).
    public var frontLog: String { front?.errorsSoFar ?? "" }

    /// What Janus logged so far (its view of the WebRTC sessions).
    public var log: String { janus?.outputSoFar ?? "" }

    /// Runs `body` with this SFU, then stops it (processes, namespace), also when `body` throws.
    public func use<Result>(_ body: (JanusSFU) async throws -> Result) async throws -> Result {
        let result: Result
        do { result = try await body(self) } catch {
            await stop()
            throw error
        }
        await stop()
        return result
    }

    public func stop() async {
        front?.signal(SIGKILL)
        _ = await front?.wait(timeout: 10)
        await stopJanus()
        await removeNetwork()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func removeNetwork() async { await network.remove() }
}
