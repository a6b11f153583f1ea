/// The `CLASS` of the date ranges the relay writes for session events.
enum HLSDateRangeClass {
    static let pause = "com.screenpub.pause"
    static let archive = "com.screenpub.archive"
    static let marker = "com.screenpub.marker"
}
