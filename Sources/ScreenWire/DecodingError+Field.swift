/// Which field of a client's JSON a decoding failed on, and how, in words a client's author can act on: "\"streamId\"
/// is not a whole number in range", not "missing or invalid fields". Field names are the decoder's own keys (and
/// array positions), never text from the message.
enum DecodingProblem {
    /// The field and what is wrong with it, or nil when the error is not a decoding error. `isJSON`: the text is
    /// known to be JSON (a number out of its field's range is then what a failure without a field can be: the
    /// decoder does not always say which field).
    static func describe(_ error: any Error, isJSON: Bool = false) -> String? {
        guard let error = error as? DecodingError else { return nil }
        switch error {
        case .keyNotFound(let key, let context):
            return "\"\(path(context.codingPath + [key]))\" is missing"
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            return "\"\(path(context.codingPath))\" is not \(kind(type))"
        case .dataCorrupted(let context):
            guard context.codingPath.isEmpty else { return "\"\(path(context.codingPath))\" is out of range or not valid" }
            return isJSON ? "a number is out of its field's range" : "it is not valid JSON"
        @unknown default:
            return nil
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        let path = keys.map { key in key.intValue.map { "[\($0)]" } ?? key.stringValue }.joined(separator: ".")
        return String(path.prefix(80))
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Double.Type, is Float.Type: "a number"
        case is Int.Type, is UInt32.Type, is UInt64.Type, is Int64.Type, is UInt16.Type, is UInt8.Type, is Int32.Type:
            "a whole number in range"
        default: "of the expected kind"
        }
    }
}
