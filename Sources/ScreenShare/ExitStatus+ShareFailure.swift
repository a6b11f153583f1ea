public import ScreenService

extension ExitStatus {
    /// What a share that ended with `failure` exits with.
    public static func of(_ failure: ShareFailure) -> Int32 {
        switch failure {
        case .invalidSettings: usage
        case .cannotStart: cannotStart
        case .failed: runtimeFailure
        case .declined: declined
        }
    }
}
