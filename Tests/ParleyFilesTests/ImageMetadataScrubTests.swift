import Crypto
import Foundation
import NIOCore
import Testing

@testable import ParleyFiles

/// ``ImageMetadataScrub`` and ``ImageMetadataWalker``, rule by rule.
@Suite struct ImageMetadataScrubTests {
    typealias S = SampleFiles

    static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        return bytes.count >= needle.count && (0...(bytes.count - needle.count)).contains { Array(bytes[$0..<$0 + needle.count]) == needle }
    }

    static func scrubbed(_ bytes: [UInt8]) -> [UInt8] { ImageMetadataScrub.applying(ImageMetadataScrub.patches(of: bytes), to: bytes) }

    /// A phone's JPEG: EXIF with the camera, the place and the orientation, XMP, IPTC, a comment,
    /// an ICC profile, then the image.
    static func phonePhoto(orientation: Int) -> [UInt8] {
        let exif =
            Array("Exif\0\0".utf8)
            + S.tiff(entries: [(0x010F, 2, 0), (0x0112, 3, orientation), (0x8825, 4, 0)], littleEndian: true) + Array("ParleyCam GPS 48.8584N".utf8)
        let image = S.jpeg(width: 40, height: 30, orientation: nil)
        return [0xFF, 0xD8] + S.segment(0xE0, Array("JFIF\0".utf8) + [1, 2, 0, 0, 1, 0, 1, 0, 0]) + S.segment(0xE1, exif)
            + S.segment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>Paris</x:xmpmeta>".utf8))
            + S.segment(0xED, Array("Photoshop 3.0\0IPTC caption".utf8)) + S.segment(0xFE, Array("shot in Paris".utf8))
            + S.segment(0xE2, Array("ICC_PROFILE\0sRGB".utf8)) + image.dropFirst(2)
    }

    @Test func aJPEGKeepsItsSizeItsPixelsAndItsOrientationAndLosesTheRest() throws {
        let photo = Self.phonePhoto(orientation: 6)
        let clean = Self.scrubbed(photo)
        #expect(clean.count == photo.count)
        for secret in ["ParleyCam", "48.8584", "xmpmeta", "Paris", "IPTC caption"] { #expect(!Self.contains(clean, secret), "\(secret)") }
        #expect(Self.contains(clean, "JFIF") && Self.contains(clean, "ICC_PROFILE\0sRGB"), "what changes how it looks stays")
        // The image itself (from the quantization table on) is untouched, and still reads as a
        // 40 × 30 photo turned a quarter (rule 1: the orientation stays).
        let image = S.jpeg(width: 40, height: 30, orientation: nil).dropFirst(2)
        #expect(Array(clean.suffix(image.count)) == Array(image))
        let size = try #require(JPEGHeader.size(clean))
        #expect(size.width == 40 && size.height == 30 && size.orientationSwapsAxes)
        // Upright photos need no EXIF at all: it becomes a comment of zeros.
        let upright = Self.scrubbed(Self.phonePhoto(orientation: 1))
        #expect(!Self.contains(upright, "Exif") && JPEGHeader.size(upright)?.orientationSwapsAxes == false)
    }

    @Test func aPNGLosesItsTextAndEXIFChunksAndEveryCRCStillHolds() throws {
        let png = Array(S.png(width: 1, height: 1).dropLast(12))  // without IEND
        let photo =
            png + S.pngChunk("tEXt", Array("Author\0Ada at home".utf8)) + S.pngChunk("eXIf", Array("MM\0*GPS".utf8))
            + S.pngChunk("iTXt", Array("XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta/>".utf8)) + S.pngChunk("IEND", [])
        let clean = Self.scrubbed(photo)
        #expect(clean.count == photo.count && Array(clean.prefix(png.count)) == png)
        for secret in ["Ada at home", "GPS", "xmpmeta", "tEXt", "eXIf", "iTXt"] { #expect(!Self.contains(clean, secret), "\(secret)") }
        // Every chunk, renamed ones included, still has a valid CRC (rule 2).
        var offset = 8
        while offset < clean.count {
            let length = Int(try #require(clean.uint32BE(at: offset)))
            let body = Array(clean[offset + 4..<offset + 8 + length])
            #expect(Int(try #require(clean.uint32BE(at: offset + 8 + length))) == S.crc32(body))
            offset += 12 + length
        }
        #expect(offset == clean.count)
    }

    @Test func aWebPLosesItsEXIFAndXMPChunksAndTheirFlags() throws {
        let image = Array(S.webpVP8X(width: 8, height: 8)[12...])
        var body = Array("WEBP".utf8) + Array(image[0..<8]) + [image[8] | 0x0C] + Array(image[9...])
        body += Array("EXIF".utf8) + S.le32(9) + Array("GPS here!".utf8) + [0]
        body += Array("XMP ".utf8) + S.le32(4) + Array("Ada!".utf8)
        let photo = Array("RIFF".utf8) + S.le32(body.count) + body
        let clean = Self.scrubbed(photo)
        #expect(clean.count == photo.count && !Self.contains(clean, "GPS here") && !Self.contains(clean, "Ada!"))
        #expect(clean[20] & 0x0C == 0 && clean[20] & 0x10 == 0x10, "VP8X flags neither, alpha stays")
        #expect(Self.contains(clean, "PADD") && Self.contains(clean, "VP8L"))
    }

    @Test func theWalkIsTheSameInAnyChunksAndStopsAtWhatItCannotFollow() {
        for photo in [Self.phonePhoto(orientation: 8), S.png(width: 1, height: 1)] {
            let whole = ImageMetadataScrub.patches(of: photo)
            var walker = ImageMetadataWalker()
            for byte in photo { walker.feed([byte]) }
            #expect(walker.patches == whole)
        }
        // Cut anywhere: no patch starts past what was read (a part cut short is still blanked as far
        // as it goes), and the cuts that reach a metadata segment's header do find it.
        let photo = Self.phonePhoto(orientation: 6)
        var cutsWithPatches = 0
        for count in 0...photo.count {
            let patches = ImageMetadataScrub.patches(of: Array(photo.prefix(count)))
            for patch in patches { #expect(patch.offset < Int64(count), "cut at \(count)") }
            if !patches.isEmpty { cutsWithPatches += 1 }
        }
        #expect(cutsWithPatches > photo.count / 2)
        // Lying about a length stops the walk.
        #expect(ImageMetadataScrub.patches(of: [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x01] + [UInt8](repeating: 0, count: 20)).isEmpty)
        #expect(ImageMetadataScrub.patches(of: [UInt8](repeating: 0xAB, count: 100)).isEmpty)
        #expect(ImageMetadataScrub.patches(of: S.png(width: 3, height: 3)).isEmpty, "nothing to take, nothing taken")
    }

    /// The patched stream writes what ``ImageMetadataScrub/applying(_:to:)`` writes, whatever the
    /// chunks (a patch's head, zeros and tail each cut anywhere).
    @Test func patchesApplyTheSameAcrossAnyChunks() async throws {
        let photo = Self.phonePhoto(orientation: 6) + S.pngChunk("tEXt", Array("after".utf8))
        let patches = ImageMetadataScrub.patches(of: photo) + [MetadataPatch(offset: 3, head: [9, 9], zeros: 30, tail: [7, 7, 7])]
        for size in [1, 3, 7, 64, 4096] {
            var patched: [UInt8] = []
            let chunks = AsyncThrowingStream<ByteBuffer, any Error> { continuation in
                for start in stride(from: 0, to: photo.count, by: size) { continuation.yield(ByteBuffer(bytes: photo[start..<min(start + size, photo.count)])) }
                continuation.finish()
            }
            for try await chunk in PatchedChunks(base: chunks, patches: patches) {
                patched += chunk.readableBytesView
            }
            #expect(patched == ImageMetadataScrub.applying(patches, to: photo), "chunks of \(size)")
        }
    }

    @Test(arguments: BlobStoreBackend.all)
    func aStoredPhotoIsStoredAgainWithoutItsMetadata(backend: BlobStoreBackend) async throws {
        let store = try await backend.make()
        let photo = Self.phonePhoto(orientation: 6)
        func stored(_ bytes: [UInt8], as upload: String) async throws -> StoredBlob {
            _ = try await store.appendStaged(upload, at: 0, limit: 1 << 20, body: BlobStoreConformanceTests.chunks(bytes, size: 7))
            return try await store.commitStaged(upload, hashed: nil)
        }
        let original = try await stored(photo, as: "u1")
        let clean = try #require(try await ImageMetadataScrub.scrub(original, in: store, staging: "u1-m"))
        var read: [UInt8] = []
        for try await chunk in try await store.read(clean.key, range: nil).chunks { read += chunk.readableBytesView }
        #expect(read == Self.scrubbed(photo) && clean.size == original.size && clean.key != original.key)
        #expect(clean.key.sha256 == SHA256.hash(data: read).map { String(format: "%02x", $0) }.joined(), "the key is the bytes' hash")
        #expect(try await store.stagedSize("u1-m") == 0, "its staging is gone")
        // Rule 3: again, the same blob; and a photo without metadata is left as it is.
        #expect(try await ImageMetadataScrub.scrub(original, in: store, staging: "u1-m") == clean)
        #expect(try await ImageMetadataScrub.scrub(try await stored(S.png(width: 2, height: 2), as: "u2"), in: store, staging: "u2-m") == nil)
    }
}
