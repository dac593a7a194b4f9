extension ThumbnailService {
    /// Where the failures of `s3://` downloads go, with S3's error code
    /// (S3Sources.md); thumbd logs them at `warning`. The
    /// lines name the source and S3's answer, never a credential. The shared
    /// store's lines (each naming the shared store) go to `sharedStore`, or
    /// to `log` when it is nil.
    public func setStoreFailureLog(_ log: (@Sendable (String) -> Void)?,
                                   sharedStore: (@Sendable (String) -> Void)? = nil) {
        loader.storeFailureLog.set(log)
        shared?.log.withLock { $0 = sharedStore ?? log }
    }
}
