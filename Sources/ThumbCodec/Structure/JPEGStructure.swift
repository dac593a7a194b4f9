/// The JPEG structure walk (StructureWalk); its limits are named here and in
/// SourcesAndLimits.md § Structure limits.
enum JPEGStructure {
    static func walk(_ bytes: UnsafeRawBufferPointer) throws(CodecError) {}
}
