/// A HEIF image's size (HEIC, AVIF), best effort. HEIF is ISO BMFF: the top-level `meta` box names
/// the primary item (`pitm`) and holds the item properties (`iprp`): a container of properties
/// (`ipco`) and the associations of items to them (`ipma`). Each image item has an image spatial
/// extents property (`ispe`: width and height) and maybe a rotation (`irot`).
///
/// The primary item's `ispe` is the answer (a grid photo's tiles have theirs too, 512 × 512 say);
/// when the associations cannot be read, the largest `ispe` stands in. Nil when `meta` is not within
/// the bytes given, as in a file that puts its media data first.
enum HEIFHeader {
    /// A box: its four-character type and where its data (after the header) lies, cut at the end of
    /// the enclosing box or of the bytes.
    private struct Box {
        let type: String
        let data: Range<Int>
    }

    static func size(_ bytes: [UInt8]) -> ImageSize? {
        // `meta` is a full box: version and flags (4 bytes) come before its children.
        guard let meta = boxes(bytes, in: 0..<bytes.count).first(where: { $0.type == "meta" }), meta.data.count >= 4 else { return nil }
        let children = boxes(bytes, in: (meta.data.lowerBound + 4)..<meta.data.upperBound)
        guard let iprp = children.first(where: { $0.type == "iprp" }) else { return nil }
        let iprpChildren = boxes(bytes, in: iprp.data)
        guard let ipco = iprpChildren.first(where: { $0.type == "ipco" }) else { return nil }
        // Associations name properties by their 1-based place in `ipco`.
        let properties = boxes(bytes, in: ipco.data)
        let extents = properties.map { $0.type == "ispe" ? extent(bytes, $0) : nil }

        if let pitm = children.first(where: { $0.type == "pitm" }), let primary = primaryItem(bytes, pitm) {
            // The specification allows several `ipma` boxes; an item's associations are in one.
            let indices = iprpChildren.filter { $0.type == "ipma" }.lazy.compactMap { associations(bytes, $0, of: primary) }.first ?? []
            let own = indices.filter { properties.indices.contains($0 - 1) }.map { $0 - 1 }
            if let size = own.lazy.compactMap({ extents[$0] }).first {
                // `irot` turns the image anticlockwise by 90° times its low two bits.
                let quarterTurn = own.contains { properties[$0].type == "irot" && (bytes.byte(at: properties[$0].data.lowerBound) ?? 0) & 0x01 == 1 }
                return ImageSize(width: size.width, height: size.height, orientationSwapsAxes: quarterTurn)
            }
        }
        // Areas as Double: two 32-bit sides from the file can overflow an Int's product.
        return extents.compactMap { $0 }.max { Double($0.width) * Double($0.height) < Double($1.width) * Double($1.height) }
    }

    /// The boxes one after another in `range`. A size of 0 means "to the end"; of 1, a 64-bit size
    /// follows the type. A size smaller than its header is malformed and ends the list; a box
    /// longer than the range is cut to it. Every box is at least 8 bytes, so the walk ends.
    private static func boxes(_ bytes: [UInt8], in range: Range<Int>) -> [Box] {
        var found: [Box] = []
        var offset = range.lowerBound
        while offset >= 0, range.upperBound - offset >= 8, let declared = bytes.uint32BE(at: offset) {
            var header = 8
            let size: Int
            switch declared {
            case 0:
                size = range.upperBound - offset
            case 1:
                guard let large = bytes.uint64BE(at: offset + 8).flatMap({ Int(exactly: $0) }) else { return found }
                size = large
                header = 16
            default:
                guard let small = Int(exactly: declared) else { return found }
                size = small
            }
            guard size >= header else { return found }
            let (end, overflow) = offset.addingReportingOverflow(size)
            let cut = overflow ? range.upperBound : min(end, range.upperBound)
            guard cut - offset >= header else { return found }
            found.append(Box(type: String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self), data: (offset + header)..<cut))
            offset = cut
        }
        return found
    }

    /// The primary item's id: a full box, then a 16-bit id (version 0) or a 32-bit one.
    private static func primaryItem(_ bytes: [UInt8], _ pitm: Box) -> UInt32? {
        var cursor = Cursor(bytes: bytes, range: pitm.data)
        guard let version = cursor.read(1), cursor.read(3) != nil else { return nil }
        return cursor.read(version == 0 ? 2 : 4)
    }

    /// The 1-based property indices `ipma` associates with `item`, or nil when it has no entry for it.
    private static func associations(_ bytes: [UInt8], _ ipma: Box, of item: UInt32) -> [Int]? {
        var cursor = Cursor(bytes: bytes, range: ipma.data)
        // Version 1 and up have 32-bit item ids; flag bit 0 makes indices 15-bit (else 7-bit),
        // each under an "essential" bit.
        guard let version = cursor.read(1), let flags = cursor.read(3), let count = cursor.read(4) else { return nil }
        let wide = flags & 0x01 == 1
        // Each entry takes at least 3 bytes and every read moves the cursor, so a count from the
        // file larger than the box can hold ends at the first read past the box.
        for _ in 0..<count {
            guard let id = cursor.read(version < 1 ? 2 : 4), let associated = cursor.read(1) else { return nil }
            var indices: [Int] = []
            for _ in 0..<associated {
                guard let value = cursor.read(wide ? 2 : 1) else { return nil }
                indices.append(Int(value & (wide ? 0x7FFF : 0x7F)))
            }
            if id == item { return indices }
        }
        return nil
    }

    /// An `ispe`: a full box, then 32-bit width and height.
    private static func extent(_ bytes: [UInt8], _ box: Box) -> ImageSize? {
        var cursor = Cursor(bytes: bytes, range: box.data)
        guard cursor.read(4) != nil, let width = cursor.read(4).flatMap({ Int(exactly: $0) }), let height = cursor.read(4).flatMap({ Int(exactly: $0) }),
            width > 0, height > 0
        else { return nil }
        return ImageSize(width: width, height: height)
    }

    /// Big-endian reads that move forward through `range` and never past its end.
    private struct Cursor {
        let bytes: [UInt8]
        let range: Range<Int>
        var offset: Int

        init(bytes: [UInt8], range: Range<Int>) {
            self.bytes = bytes
            self.range = range
            self.offset = range.lowerBound
        }

        /// The next `width` (1...4) bytes as a number, or nil when they are not all in the range.
        mutating func read(_ width: Int) -> UInt32? {
            guard range.upperBound - offset >= width else { return nil }
            var value: UInt32 = 0
            for byte in bytes[offset..<(offset + width)] { value = value << 8 | UInt32(byte) }
            offset += width
            return value
        }
    }
}
