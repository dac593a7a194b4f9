/// A credential thumbd uses but never shows (Configuration.md, S3Sources.md): its
/// description, debug description and mirror all read `(secret)`, so no
/// string interpolation, log line, `dump` or error message built from a
/// configuration can print it. `check-config` prints `(set)` in its place.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The value itself, for the one place that hands it to libcurl.
    public let revealed: String

    public init(_ value: String) { revealed = value }

    public var description: String { "(secret)" }
    public var debugDescription: String { "(secret)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
