// Known-answer tests (FIPS 180-4 examples, RFC 1321 §A.5) and streaming checks.
import XCTest
@testable import QuireCore

final class HashingTests: XCTestCase {
    private let nist448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
    private let millionA = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)

    private func hex<H: StreamingHash>(_: H.Type, _ string: String) -> String {
        hexString(H.hash(Array(string.utf8)))
    }

    func testSHA1KnownAnswers() {
        XCTAssertEqual(hex(SHA1.self, ""), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        XCTAssertEqual(hex(SHA1.self, "abc"), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(hex(SHA1.self, nist448), "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        XCTAssertEqual(hexString(SHA1.hash(millionA)), "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    func testSHA256KnownAnswers() {
        XCTAssertEqual(hex(SHA256.self, ""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(hex(SHA256.self, "abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(hex(SHA256.self, nist448), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(
            hexString(SHA256.hash(millionA)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testMD5RFC1321Suite() {
        let suite: [(String, String)] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (input, expected) in suite {
            XCTAssertEqual(hex(MD5.self, input), expected, "MD5(\"\(input)\")")
        }
    }

    func testDigestSizes() {
        XCTAssertEqual(SHA1.hash([UInt8]()).count, 20)
        XCTAssertEqual(SHA256.hash([UInt8]()).count, 32)
        XCTAssertEqual(MD5.hash([UInt8]()).count, 16)
    }

    func testChunkedMatchesOneShot() {
        checkChunkedMatchesOneShot(SHA1.self)
        checkChunkedMatchesOneShot(SHA256.self)
        checkChunkedMatchesOneShot(MD5.self)
    }

    private func checkChunkedMatchesOneShot<H: StreamingHash>(_: H.Type, file: StaticString = #filePath, line: UInt = #line) {
        var rng = SplitMix64(seed: 0x5EED)
        // Lengths straddle the 55/56/64-byte padding boundaries.
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 1000, 70_001] {
            let data = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let expected = H.hash(data)
            for chunkSizes in [[1], [63], [64], [4097], [1, 63, 64, 4097, 0, 65, 7]] {
                var hasher = H()
                var offset = 0, index = 0
                while offset < data.count {
                    let size = min(chunkSizes[index % chunkSizes.count], data.count - offset)
                    if index.isMultiple(of: 2) {
                        hasher.update(data[offset..<offset + size])
                    } else {
                        data.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[offset..<offset + size])) }
                    }
                    offset += size
                    index += 1
                }
                XCTAssertEqual(hasher.finalize(), expected, "\(H.self) length \(length) chunks \(chunkSizes)",
                               file: file, line: line)
            }
            // Non-contiguous sequences take the generic path.
            var hasher = H()
            hasher.update(AnySequence(data))
            XCTAssertEqual(hasher.finalize(), expected, "\(H.self) AnySequence length \(length)", file: file, line: line)
        }
    }

    func testFinalizeResetsState() {
        var hasher = SHA256()
        hasher.update(Array("garbage".utf8))
        _ = hasher.finalize()
        hasher.update(Array("abc".utf8))
        XCTAssertEqual(hexString(hasher.finalize()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// The SHA-instruction path and the portable Swift code agree block for block (the known
    /// answers above go through whichever this CPU uses).
    func testSHA256HardwareMatchesPortable() throws {
        try XCTSkipUnless(SHA256.usesHardware, "this CPU has no SHA instructions; the portable code is the only path")
        var random = SplitMix64(seed: 256)
        for blocks in [1, 2, 3, 7, 64] {
            let bytes = (0..<blocks * 64).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            var hardware = SHA256.initialState
            var portable = SHA256.initialState
            bytes.withUnsafeBytes { buffer in
                SHA256.compress(&hardware, buffer.baseAddress!, blocks)
                SHA256.compressPortable(&portable, buffer.baseAddress!, blocks)
            }
            XCTAssertTrue(withUnsafeBytes(of: hardware) { h in withUnsafeBytes(of: portable) { p in h.elementsEqual(p) } }, "\(blocks) blocks")
        }
    }

    func testHexString() {
        XCTAssertEqual(hexString([UInt8]()), "")
        XCTAssertEqual(hexString([0x00, 0x0F, 0xA5, 0xFF] as [UInt8]), "000fa5ff")
    }
}

/// A small deterministic generator (SplitMix64) for reproducible test choices.
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 31)
    }
}
