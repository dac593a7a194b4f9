import Foundation

/// The regular files under `dir`, relative to it (a store's originals, its
/// temporary downloads): what a failed or refused download must not leave.
public func regularFiles(under dir: String) -> [String] {
    guard let e = FileManager.default.enumerator(atPath: dir) else { return [] }
    var files: [String] = []
    while let name = e.nextObject() as? String {
        if (e.fileAttributes?[.type] as? FileAttributeType) == .typeRegular { files.append(name) }
    }
    return files
}
