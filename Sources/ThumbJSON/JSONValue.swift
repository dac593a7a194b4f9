/// A parsed JSON document that keeps what `JSONSerialization` blurs: integers
/// apart from fractions, booleans apart from numbers, object keys in order.
/// Config files and prefetch bodies need exactly those distinctions.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int`.
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order; a duplicate key is a parse error.
    case object([(key: String, value: JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.bool(x), .bool(y)): x == y
        case let (.integer(x), .integer(y)): x == y
        case let (.number(x), .number(y)): x == y
        case let (.string(x), .string(y)): x == y
        case let (.array(x), .array(y)): x == y
        case let (.object(x), .object(y)):
            x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }

    /// A short name of the value's type, for error messages.
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer: "an integer"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
