import Foundation

extension PrivatePipeWire {
    /// Makes an output of this PipeWire that plays into nothing (a null sink, `support.null-audio-sink`), as a
    /// sound card's output would be on a desktop: it has a monitor, and players target it by `node.name`.
    /// Returns its node id once PipeWire lists it.
    @discardableResult
    public func addNullSink(named name: String) async throws -> UInt32 {
        let properties = "{ factory.name=support.null-audio-sink media.class=Audio/Sink node.name=\(name) audio.position=[FL FR] object.linger=true }"
        let created = try await ChildProcess.run("/usr/bin/pw-cli", ["create-node", "adapter", properties], environment: environment, timeout: 10)
        guard created.status == 0 else { throw Failure(description: "pw-cli create-node: \(created.standardError)") }
        for _ in 0..<200 {
            if let id = try await nodeID(named: name) { return id }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "PipeWire does not list the null sink \(name)")
    }

    /// The id of the node called `name`, if PipeWire lists one.
    public func nodeID(named name: String) async throws -> UInt32? {
        let dump = try await ChildProcess.run("/usr/bin/pw-dump", [], environment: environment, timeout: 10)
        let objects = (try? JSONSerialization.jsonObject(with: Data(dump.standardOutput.utf8))) as? [[String: Any]] ?? []
        for object in objects where object["type"] as? String == "PipeWire:Interface:Node" {
            let properties = (object["info"] as? [String: Any])?["props"] as? [String: Any]
            if properties?["node.name"] as? String == name, let id = object["id"] as? Int { return UInt32(id) }
        }
        return nil
    }

    /// An application playing a `frequency` Hz sine for `seconds` into `sink` (pw-cat, as a media player would),
    /// as a playback stream called `streamName`. The caller ends it.
    public func playTone(frequency: Int, seconds: Int = 60, into sink: String, streamName: String = "screenpub-test-player") async throws -> ChildProcess {
        let file = runtimeDirectory + "/tone-\(frequency)-\(UUID().uuidString.prefix(6)).wav"
        let made = try await ChildProcess.run(
            "/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=\(frequency):sample_rate=48000:duration=\(seconds)", "-ac", "2", file],
            timeout: 30)
        guard made.status == 0 else { throw Failure(description: "ffmpeg could not make a tone: \(made.standardError)") }
        let player = try ChildProcess(
            "/usr/bin/pw-cat", ["--playback", "--target", sink, "--properties", "{ node.name=\(streamName) }", file], environment: environment)
        for _ in 0..<200 {
            if try await nodeID(named: streamName) != nil { return player }
            try await Task.sleep(for: .milliseconds(50))
        }
        player.signal(SIGKILL)
        throw Failure(description: "pw-cat did not start playing into \(sink): \(player.errorsSoFar)")
    }
}
