/// The sizes a deployment serves (API.md § Geometry `allowedSizes`, presets),
/// or a ladder of widths an app keeps to so that few variants fill every
/// screen. No endpoint reveals them: they are client configuration.
public enum SizeLadder: Hashable, Sendable {
    /// Any box: the exact pixels.
    case any
    /// `output.allowedSizes`: the only `w`×`h` boxes served, checked before `dpr`.
    case allowedSizes([Box])
    /// Named presets and their boxes (`preset=NAME`), checked like `allowedSizes`.
    case presets([String: Box])
    /// Widths in pixels, smallest first; heights follow the box's aspect ratio.
    case widths([Int])

    public struct Box: Hashable, Sendable {
        public let width: Int, height: Int
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }
    }
}
