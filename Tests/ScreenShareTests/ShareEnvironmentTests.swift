import ScreenShare
import Testing

/// A share's configuration from the environment it is handed (``ShareEnvironment``), never from the test's own
/// process, and the settings a reload cannot change, by name.
@Suite struct ShareEnvironmentTests {
    @Test func theEncodersDefaultThreadsFollowTheCoresItIsTold() throws {
        let settings = ShareSettings.testing(to: ["collect:a"], fps: 30)
        let one = try ShareConfiguration(settings, environment: ShareEnvironment(variables: [:], processorCount: 1), destinationKinds: testKinds)
        let four = try ShareConfiguration(settings, environment: ShareEnvironment(variables: [:], processorCount: 4), destinationKinds: testKinds)
        #expect(one.capture.encoder.threads == 1)
        #expect(four.capture.encoder.threads == 2)
    }

    /// Descriptor 0 is open in every test process: only what the environment handed in says counts.
    @Test func aPipeWireRemoteMustBeADescriptorTheEnvironmentSaysIsOpen() throws {
        var settings = ShareSettings.testing(to: ["collect:a"])
        settings.backend = .pipewire
        settings.pipewireNode = 42
        settings.pipewireRemote = 0
        #expect {
            _ = try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds)
        } throws: { error in
            (error as? ShareError)?.description == "--pipewire-remote 0 is not an open file descriptor"
        }
        let holding = ShareEnvironment(variables: [:], isOpenDescriptor: { $0 == 0 })
        guard case .pipeWireNode(let options) = try ShareConfiguration(settings, environment: holding, destinationKinds: testKinds).capture.source else {
            Issue.record("--pipewire-node did not capture that node")
            return
        }
        #expect(options.nodeID == 42)
    }

    @Test func aReloadNamesTheStartupOptionsItChangesAlphabetically() throws {
        let before = ShareSettings.testing(to: ["collect:a"])
        var after = before
        after.port = 9000
        after.audio = "desktop"
        after.notifyChat = true
        after.fps = 10  // applied by a reload: not a start-up setting
        let startup = { (settings: ShareSettings) in try ShareConfiguration(settings, environment: [:], destinationKinds: testKinds).startupSettings }
        #expect(try startup(before).changedOptions(in: startup(after)) == ["audio", "notify-chat", "port"])
        #expect(try startup(before).changedOptions(in: startup(before)).isEmpty)
    }
}
