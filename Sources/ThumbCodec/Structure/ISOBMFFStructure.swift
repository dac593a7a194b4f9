/// The ISOBMFF (AVIF, HEIC) structure walk (StructureWalk); its limits are
/// named here and in SourcesAndLimits.md § Structure limits.
enum ISOBMFFStructure {
    static func walk(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) throws(CodecError) {}
}
