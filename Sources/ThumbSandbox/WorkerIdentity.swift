import Glibc

/// Whom the workers of a root daemon run as (`sandbox.user`, SPEC §8 and
/// §16): a user's uid and its primary group, resolved by the daemon at start
/// and on reload and handed to each worker on its command line, so a worker
/// never reads the user database itself.
public struct WorkerIdentity: Equatable, Sendable, CustomStringConvertible {
    public let uid: uid_t
    public let gid: gid_t

    public init(uid: uid_t, gid: gid_t) {
        self.uid = uid
        self.gid = gid
    }

    /// `sandbox.user` as written in the configuration: a name or a number.
    public enum User: Equatable, Sendable {
        case name(String)
        case id(Int)
    }

    public enum ResolutionError: Error, Equatable, CustomStringConvertible {
        case unknown(String)
        case root

        public var description: String {
            switch self {
            case .unknown(let name): "no user '\(name)' on this system"
            case .root: "must not be root (uid 0 or gid 0): the workers would keep every privilege"
            }
        }
    }

    /// The uid and primary group of `user`. A number without an entry in the
    /// user database is its own group too (a container's bare uid); a name must
    /// exist. Root, by name or number, is refused.
    public static func resolve(_ user: User) throws(ResolutionError) -> WorkerIdentity {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        let identity: WorkerIdentity
        switch user {
        case .name(let name):
            guard !name.isEmpty, getpwnam_r(name, &entry, &buffer, buffer.count, &found) == 0, found != nil else {
                throw .unknown(name)
            }
            identity = WorkerIdentity(uid: entry.pw_uid, gid: entry.pw_gid)
        case .id(let number):
            guard number >= 0, number < Int(UInt32.max) else { throw .unknown(String(number)) }
            let uid = uid_t(number)
            if getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil {
                identity = WorkerIdentity(uid: uid, gid: entry.pw_gid)
            } else {
                identity = WorkerIdentity(uid: uid, gid: gid_t(number))
            }
        }
        guard identity.uid != 0, identity.gid != 0 else { throw .root }
        return identity
    }

    /// The worker's command-line form: `UID:GID`.
    var argument: String { "\(uid):\(gid)" }

    init?(argument: String) {
        let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let uid = uid_t(parts[0]), let gid = gid_t(parts[1]) else { return nil }
        self.init(uid: uid, gid: gid)
    }

    public var description: String { "uid \(uid), gid \(gid)" }
}
