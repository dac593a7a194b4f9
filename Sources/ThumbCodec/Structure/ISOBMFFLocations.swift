/// What `iloc` says (ISO/IEC 14496-12 § 8.11.3): where each item's bytes are.
struct ISOBMFFLocations {
    struct Location {
        /// 0: file offsets; 1: offsets into `idat`; 2: into another item
        /// (neither library reads that one: they refuse it themselves).
        let method: UInt8
        /// With the item's base_offset added.
        let extents: [(offset: UInt64, length: UInt64)]
        let length: UInt64
    }

    private(set) var items: [UInt32: Location] = [:]
    private var extents = 0

    /// The whole box: versions 0–2, 0/4/8-byte offset, length, base_offset
    /// and index fields, within the item and extent limits. With a field of
    /// size 0 an extent takes no bytes of the file at all, so the counts, not
    /// the box's size, bound what a library allocates for them.
    mutating func read(_ box: ISOBMFFBox, _ file: UnsafeRawBufferPointer) throws(CodecError) {
        let (version, _, fields) = try box.fullBox(file)
        var reader = fields
        guard version <= 2 else { throw .corrupt("ISOBMFF iloc: unknown version \(version)") }
        guard let sizes = reader.u8(), let more = reader.u8() else { throw .corrupt("ISOBMFF iloc: truncated") }
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 15), baseSize = Int(more >> 4)
        let indexSize = version == 0 ? 0 : Int(more & 15)
        guard [offsetSize, lengthSize, baseSize, indexSize].allSatisfy({ $0 == 0 || $0 == 4 || $0 == 8 }) else {
            throw .corrupt("ISOBMFF iloc: field sizes other than 0, 4 or 8 bytes")
        }
        guard let count = version < 2 ? reader.u16be().map(Int.init) : reader.u32be().map(Int.init) else {
            throw .corrupt("ISOBMFF iloc: truncated item count")
        }
        guard count <= ISOBMFFLimits.items else {
            throw .tooComplex("ISOBMFF iloc: \(count) items, over \(ISOBMFFLimits.items)")
        }
        for _ in 0..<count {
            guard let item = version < 2 ? reader.u16be().map(UInt32.init) : reader.u32be() else {
                throw .corrupt("ISOBMFF iloc: truncated item ID")
            }
            var method: UInt8 = 0
            if version > 0 {
                guard let word = reader.u16be() else { throw .corrupt("ISOBMFF iloc: truncated construction method") }
                method = UInt8(word & 15)
                guard method <= 2 else { throw .corrupt("ISOBMFF iloc: unknown construction method \(method)") }
            }
            guard reader.skip(2), let base = reader.uint(size: baseSize), let extentCount = reader.u16be() else {
                throw .corrupt("ISOBMFF iloc: truncated item \(item)")
            }
            guard extentCount <= ISOBMFFLimits.extentsPerItem else {
                throw .tooComplex("ISOBMFF iloc: item \(item) has \(extentCount) extents, over \(ISOBMFFLimits.extentsPerItem)")
            }
            extents += Int(extentCount)
            guard extents <= ISOBMFFLimits.extents else {
                throw .tooComplex("ISOBMFF iloc: more than \(ISOBMFFLimits.extents) extents")
            }
            var list: [(offset: UInt64, length: UInt64)] = []
            var total: UInt64 = 0
            for _ in 0..<extentCount {
                guard reader.skip(indexSize), let offset = reader.uint(size: offsetSize),
                      let length = reader.uint(size: lengthSize) else {
                    throw .corrupt("ISOBMFF iloc: truncated extent of item \(item)")
                }
                let (start, overflow) = base.addingReportingOverflow(offset)
                let (sum, tooLong) = total.addingReportingOverflow(length)
                guard !overflow, !tooLong, start.addingReportingOverflow(length).overflow == false else {
                    throw .corrupt("ISOBMFF iloc: an extent of item \(item) overflows")
                }
                list.append((start, length))
                total = sum
            }
            guard items[item] == nil else { throw .corrupt("ISOBMFF iloc: item \(item) is located twice") }
            items[item] = Location(method: method, extents: list, length: total)
        }
    }

    /// Every extent inside the file (method 0) or inside `idat` (method 1).
    func checkBounds(fileSize: Int, idat: Range<Int>?) throws(CodecError) {
        for (item, location) in items where location.method < 2 {
            let limit = UInt64(location.method == 0 ? fileSize : idat?.count ?? 0)
            for extent in location.extents where extent.offset + extent.length > limit {
                throw .corrupt("ISOBMFF iloc: item \(item)'s data lies past the end of the \(location.method == 0 ? "file" : "idat box")")
            }
        }
    }

    /// The first `count` bytes of `item`'s data (fewer if it is shorter), or
    /// nil when it has no location either library could read. Call after
    /// `checkBounds`.
    func prefix(of item: UInt32, count: Int, file: UnsafeRawBufferPointer, idat: Range<Int>?) -> [UInt8]? {
        guard let location = items[item], location.method < 2 else { return nil }
        let origin = location.method == 0 ? 0 : idat?.lowerBound ?? 0
        var bytes: [UInt8] = []
        for extent in location.extents where bytes.count < count {
            let start = origin + Int(extent.offset)
            let take = min(Int(extent.length), count - bytes.count)
            bytes += file[start..<start + take]
        }
        return bytes
    }
}
