/// A JPEG's size: its segments are walked from the start to the frame header (SOF), noting the
/// EXIF orientation on the way.
enum JPEGHeader {
    /// The size in the first frame header, or nil when the segments are malformed or the frame
    /// header is not within `bytes`. When `bytes` is the whole file, its scan (SOS) must follow the
    /// frame header too: a file cut after its header holds no picture, and is no photo.
    static func size(_ bytes: [UInt8], isWholeFile: Bool = false) -> ImageSize? {
        guard bytes.matches([0xFF, 0xD8]) else { return nil }
        var offset = 2
        var orientation: Int?
        var size: ImageSize?
        while offset < bytes.count {
            // Each segment starts with FF and its marker, maybe after more FF fill bytes. Anything
            // else here means the walk lost its way: give up rather than guess.
            guard bytes[offset] == 0xFF else { return nil }
            var markerAt = offset + 1
            while markerAt < bytes.count, bytes[markerAt] == 0xFF { markerAt += 1 }
            guard let marker = bytes.byte(at: markerAt) else { return nil }
            let segment = markerAt + 1
            switch marker {
            case 0x01, 0xD0...0xD7:
                // TEM and the restart markers stand alone, with no length.
                offset = segment
                continue
            case 0xDA:
                // The scan's start: after the frame header, the picture; before it, there is none.
                return size
            case 0x00, 0xD8, 0xD9:
                // A stuffed zero, a second SOI, or EOI: the file is malformed, or ends unscanned.
                return nil
            default:
                break
            }
            // The length counts its own two bytes: under 2 is malformed, and 2 or more moves the walk
            // forward, so it cannot loop on one segment.
            guard let length = bytes.uint16BE(at: segment), length >= 2 else { return nil }
            let data = segment + 2
            // `segment` is at most `count` and `length` at most 65,535: the sum cannot overflow.
            let end = segment + length
            if isFrameHeader(marker), size == nil {
                // Sample precision (1 byte), then the number of lines and of samples per line.
                guard length >= 7, let height = bytes.uint16BE(at: data + 1), let width = bytes.uint16BE(at: data + 3) else { return nil }
                size = ImageSize(width: width, height: height, orientationSwapsAxes: (5...8).contains(orientation ?? 1))
                guard isWholeFile else { return size }  // the scan may lie past what was read
            }
            // The first APP1 that is EXIF (XMP lives in APP1 segments too) holds the orientation.
            // Its TIFF data runs from after "Exif\0\0" to the segment's end, or the bytes' end; a
            // segment too short to hold the "Exif" it seems to start with has none.
            let tiffEnd = min(end, bytes.count)
            if marker == 0xE1, orientation == nil, data + 6 <= tiffEnd, bytes.matches([0x45, 0x78, 0x69, 0x66, 0x00, 0x00], at: data) {
                orientation = EXIF.orientation(bytes, tiff: (data + 6)..<tiffEnd) ?? 1
            }
            offset = end
        }
        return nil
    }

    /// SOF0–SOF15 (C0–CF) are frame headers, except C4 (DHT, Huffman tables), C8 (JPG, reserved)
    /// and CC (DAC, arithmetic coding conditioning), which share the range.
    private static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }
}

/// The Orientation tag of an EXIF block: a TIFF header (byte order, 42, offset of IFD0), then IFD0's
/// 12-byte entries. All offsets are relative to the TIFF header and come from the file, so every read
/// stays inside the segment that holds them.
enum EXIF {
    /// Orientation (tag 0x0112, a SHORT) from IFD0 of the TIFF data in `tiff`, or nil.
    static func orientation(_ bytes: [UInt8], tiff: Range<Int>) -> Int? {
        let start = tiff.lowerBound
        let littleEndian: Bool
        if bytes.matches("II", at: start) {
            littleEndian = true
        } else if bytes.matches("MM", at: start) {
            littleEndian = false
        } else {
            return nil
        }
        let reader = Reader(bytes: bytes, range: tiff, littleEndian: littleEndian)
        guard reader.uint16(at: 2) == 42, let ifd = reader.uint32(at: 4).flatMap({ Int(exactly: $0) }), let entries = reader.uint16(at: ifd)
        else { return nil }
        for index in 0..<entries {
            // `entries` is under 65,536, so the entry's offset is small unless `ifd` is huge, and a
            // huge `ifd` failed the read of `entries` above; still, check.
            let (entry, overflow) = ifd.addingReportingOverflow(2 + 12 * index)
            guard !overflow, let tag = reader.uint16(at: entry) else { return nil }
            guard tag == 0x0112 else { continue }
            // Type 3 is SHORT; a count of 1 keeps the value inline, in the entry's last 4 bytes.
            guard reader.uint16(at: entry + 2) == 3, reader.uint32(at: entry + 4) == 1 else { return nil }
            return reader.uint16(at: entry + 8)
        }
        return nil
    }

    /// Reads at offsets relative to the TIFF header, in its byte order, only inside `range`.
    private struct Reader {
        let bytes: [UInt8]
        let range: Range<Int>
        let littleEndian: Bool

        /// The absolute offset of `width` bytes at `offset`, or nil when they are not all in `range`.
        private func absolute(_ offset: Int, width: Int) -> Int? {
            guard offset >= 0, range.count - offset >= width else { return nil }
            return range.lowerBound + offset
        }

        func uint16(at offset: Int) -> Int? {
            guard let at = absolute(offset, width: 2) else { return nil }
            return littleEndian ? bytes.uint16LE(at: at) : bytes.uint16BE(at: at)
        }

        func uint32(at offset: Int) -> UInt32? {
            guard let at = absolute(offset, width: 4) else { return nil }
            return littleEndian ? bytes.uint32LE(at: at) : bytes.uint32BE(at: at)
        }
    }
}
