extension ThumbnailService {
    /// Where the failures of `s3://` downloads go, with S3's error code
    /// (S3Sources.md); thumbd logs them at `warning`. The
    /// lines name the source and S3's answer, never a credential.
    public func setStoreFailureLog(_ log: (@Sendable (String) -> Void)?) {
        loader.storeFailureLog.set(log)
        shared?.log.withLock { $0 = log }
    }
}
