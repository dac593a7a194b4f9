import ThumbService
import ThumbJSON
/// Byte comparison whose time does not depend on where the inputs differ, so
/// a client cannot find a valid signature or token one byte at a time.
/// (The length is not secret: signatures have a fixed length, and a token's
/// length alone does not help guess it.)
enum ConstantTime {
    static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
