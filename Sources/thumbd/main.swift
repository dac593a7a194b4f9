import ThumbCodec

print("thumbd 0.1.0 (\(codecLibraryVersions))")
