import CThumbCodec

/// Versions of the image libraries linked in, for `thumbd --version`.
public let codecLibraryVersions: String = String(cString: thumbd_codec_versions())
