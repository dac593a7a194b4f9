/// The PNG structure walk (StructureWalk); its limits are named here and in
/// SourcesAndLimits.md § Structure limits.
enum PNGStructure {
    static func walk(_ bytes: UnsafeRawBufferPointer) throws(CodecError) {}
}
