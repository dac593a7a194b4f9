extension ServiceConfiguration.DiskStore {
    /// Where originals live: `path` when set, else `$CACHE_DIRECTORY/originals`
    /// under systemd (its first entry), else `$XDG_CACHE_HOME/thumbd/originals`,
    /// else `$HOME/.cache/thumbd/originals`, as every XDG program reads them.
    /// Nil when none of those is set. Pure: tests pass an environment.
    public func resolvedPath(environment: [String: String]) -> String? {
        if let path { return path }
        if let systemd = environment["CACHE_DIRECTORY"]?.split(separator: ":").first, !systemd.isEmpty {
            return systemd + "/originals"
        }
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/thumbd/originals" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.cache/thumbd/originals" }
        return nil
    }
}
