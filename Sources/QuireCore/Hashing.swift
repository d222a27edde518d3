// Hashing.swift — streaming SHA-1, SHA-256 and MD5.
// The per-algorithm compression functions below are fully unrolled; SHA-256 uses the CPU's SHA
// instructions where it has them (CQuireSHA).
import CQuireSHA

/// An incremental (streaming) message digest.
public protocol StreamingHash {
    /// Creates a hasher in its initial state.
    init()
    /// Absorbs `bytes`. Contiguous sequences (`[UInt8]`, `ArraySlice`, ...) take a fast path.
    mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8
    /// Absorbs the bytes in `buffer`.
    mutating func update(_ buffer: UnsafeRawBufferPointer)
    /// Returns the digest of everything absorbed so far and resets the hasher to its initial state.
    mutating func finalize() -> [UInt8]
}

extension StreamingHash {
    public mutating func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            self.update(UnsafeRawBufferPointer(buffer))
        }
        if handled != nil { return }
        // Non-contiguous sequence: gather into a stack buffer and absorb it in chunks.
        let chunkSize = 4096
        withUnsafeTemporaryAllocation(byteCount: chunkSize, alignment: 16) { scratch in
            var filled = 0
            for byte in bytes {
                scratch[filled] = byte
                filled &+= 1
                if filled == chunkSize {
                    self.update(UnsafeRawBufferPointer(scratch))
                    filled = 0
                }
            }
            if filled > 0 {
                self.update(UnsafeRawBufferPointer(rebasing: scratch[..<filled]))
            }
        }
    }

    /// One-shot digest of `bytes`.
    public static func hash<B: Sequence>(_ bytes: B) -> [UInt8] where B.Element == UInt8 {
        var hasher = Self()
        hasher.update(bytes)
        return hasher.finalize()
    }
}

/// Lowercase hexadecimal rendering of `bytes`.
public func hexString<B: Sequence>(_ bytes: B) -> String where B.Element == UInt8 {
    let digits: StaticString = "0123456789abcdef"
    var utf8: [UInt8] = []
    utf8.reserveCapacity(bytes.underestimatedCount &* 2)
    digits.withUTF8Buffer { table in
        for byte in bytes {
            utf8.append(table[Int(byte &>> 4)])
            utf8.append(table[Int(byte & 0x0F)])
        }
    }
    return String(decoding: utf8, as: UTF8.self)
}

// MARK: - Algorithms

public struct SHA1: StreamingHash, Sendable {
    typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32)
    static let initialState: State = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)

    private var state: State
    private var block = PendingBlock()

    public init() { state = Self.initialState }

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        absorb(&state, &block, buffer, Self.compress)
    }

    public mutating func finalize() -> [UInt8] {
        pad(&state, &block, bigEndianLength: true, Self.compress)
        let s = state
        self = Self()
        return digestBytes(count: 20) { out in
            storeBE32(s.0, out, 0); storeBE32(s.1, out, 4); storeBE32(s.2, out, 8)
            storeBE32(s.3, out, 12); storeBE32(s.4, out, 16)
        }
    }
}

public struct SHA256: StreamingHash, Sendable {
    typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
    static let initialState: State = (
        0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A,
        0x510E_527F, 0x9B05_688C, 0x1F83_D9AB, 0x5BE0_CD19
    )

    private var state: State
    private var block = PendingBlock()

    public init() { state = Self.initialState }

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        absorb(&state, &block, buffer, Self.compress)
    }

    public mutating func finalize() -> [UInt8] {
        pad(&state, &block, bigEndianLength: true, Self.compress)
        let s = state
        self = Self()
        return digestBytes(count: 32) { out in
            storeBE32(s.0, out, 0); storeBE32(s.1, out, 4); storeBE32(s.2, out, 8); storeBE32(s.3, out, 12)
            storeBE32(s.4, out, 16); storeBE32(s.5, out, 20); storeBE32(s.6, out, 24); storeBE32(s.7, out, 28)
        }
    }
}

public struct MD5: StreamingHash, Sendable {
    typealias State = (UInt32, UInt32, UInt32, UInt32)
    static let initialState: State = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476)

    private var state: State
    private var block = PendingBlock()

    public init() { state = Self.initialState }

    public mutating func update(_ buffer: UnsafeRawBufferPointer) {
        absorb(&state, &block, buffer, Self.compress)
    }

    public mutating func finalize() -> [UInt8] {
        pad(&state, &block, bigEndianLength: false, Self.compress)
        let s = state
        self = Self()
        return digestBytes(count: 16) { out in
            storeLE32(s.0, out, 0); storeLE32(s.1, out, 4); storeLE32(s.2, out, 8); storeLE32(s.3, out, 12)
        }
    }
}

// MARK: - Shared Merkle–Damgård plumbing (64-byte blocks)

/// A partially filled 64-byte input block plus the total message length.
struct PendingBlock: Sendable {
    var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    var count = 0
    var totalBytes: UInt64 = 0
}

@inline(__always)
private func absorb<State>(
    _ state: inout State, _ block: inout PendingBlock, _ input: UnsafeRawBufferPointer,
    _ compress: (inout State, UnsafeRawPointer, Int) -> Void
) {
    guard var src = input.baseAddress, input.count > 0 else { return }
    var remaining = input.count
    block.totalBytes &+= UInt64(truncatingIfNeeded: remaining)

    let pending = block.count
    if pending > 0 {
        let take = Swift.min(64 - pending, remaining)
        withUnsafeMutableBytes(of: &block.bytes) { buf in
            (buf.baseAddress! + pending).copyMemory(from: src, byteCount: take)
            if pending + take == 64 { compress(&state, UnsafeRawPointer(buf.baseAddress!), 1) }
        }
        src += take
        remaining -= take
        block.count = (pending + take) & 63
        if remaining == 0 { return }
    }

    let fullBlocks = remaining &>> 6
    if fullBlocks > 0 {
        compress(&state, src, fullBlocks)
        src += fullBlocks &<< 6
        remaining &= 63
    }
    if remaining > 0 {
        withUnsafeMutableBytes(of: &block.bytes) { buf in
            buf.baseAddress!.copyMemory(from: src, byteCount: remaining)
        }
        block.count = remaining
    }
}

/// Appends 0x80, zero padding and the 64-bit bit length, then compresses the final block(s).
@inline(__always)
private func pad<State>(
    _ state: inout State, _ block: inout PendingBlock, bigEndianLength: Bool,
    _ compress: (inout State, UnsafeRawPointer, Int) -> Void
) {
    let bitLength = block.totalBytes &<< 3
    var used = block.count
    withUnsafeMutableBytes(of: &block.bytes) { buf in
        let base = buf.baseAddress!
        buf[used] = 0x80
        used += 1
        if used > 56 {
            (base + used).initializeMemory(as: UInt8.self, repeating: 0, count: 64 - used)
            compress(&state, UnsafeRawPointer(base), 1)
            used = 0
        }
        (base + used).initializeMemory(as: UInt8.self, repeating: 0, count: 56 - used)
        let length = bigEndianLength ? bitLength.bigEndian : bitLength.littleEndian
        buf.storeBytes(of: length, toByteOffset: 56, as: UInt64.self)
        compress(&state, UnsafeRawPointer(base), 1)
    }
}

@inline(__always)
private func digestBytes(count: Int, _ write: (UnsafeMutableRawPointer) -> Void) -> [UInt8] {
    [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        write(UnsafeMutableRawPointer(buffer.baseAddress!))
        initialized = count
    }
}

// MARK: - Word helpers

@inline(__always)
private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &<< n) | (x &>> (32 &- n)) }

@inline(__always)
private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x &>> n) | (x &<< (32 &- n)) }

@inline(__always)
private func loadBE32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 {
    UInt32(bigEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
}

@inline(__always)
private func loadLE32(_ p: UnsafeRawPointer, _ offset: Int) -> UInt32 {
    UInt32(littleEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
}

@inline(__always)
private func storeBE32(_ x: UInt32, _ p: UnsafeMutableRawPointer, _ offset: Int) {
    p.storeBytes(of: x.bigEndian, toByteOffset: offset, as: UInt32.self)
}

@inline(__always)
private func storeLE32(_ x: UInt32, _ p: UnsafeMutableRawPointer, _ offset: Int) {
    p.storeBytes(of: x.littleEndian, toByteOffset: offset, as: UInt32.self)
}

// SHA-1 (FIPS 180-4 §4.1.1, §6.1)
@inline(__always) private func sha1Ch(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { z ^ (x & (y ^ z)) }
@inline(__always) private func sha1Parity(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { x ^ y ^ z }
@inline(__always) private func sha1Maj(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { (x & y) | (z & (x | y)) }

@inline(__always)
private func sha1Round(
    _ a: UInt32, _ b: inout UInt32, _ c: UInt32, _ d: UInt32, _ e: inout UInt32,
    _ kw: UInt32, _ f: (UInt32, UInt32, UInt32) -> UInt32
) {
    e = e &+ rotl(a, 5) &+ f(b, c, d) &+ kw
    b = rotl(b, 30)
}

// SHA-256 (FIPS 180-4 §4.1.2, §6.2)
@inline(__always) private func sha256Sigma0(_ x: UInt32) -> UInt32 { rotr(x, 7) ^ rotr(x, 18) ^ (x &>> 3) }
@inline(__always) private func sha256Sigma1(_ x: UInt32) -> UInt32 { rotr(x, 17) ^ rotr(x, 19) ^ (x &>> 10) }

@inline(__always)
private func sha256Round(
    _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
    _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ kw: UInt32
) {
    let bigSigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
    let ch = g ^ (e & (f ^ g))
    let t1 = h &+ bigSigma1 &+ ch &+ kw
    let bigSigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
    let maj = (a & b) | (c & (a | b))
    d = d &+ t1
    h = t1 &+ bigSigma0 &+ maj
}

// MD5 (RFC 1321 §3.4)
@inline(__always) private func md5F(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { z ^ (x & (y ^ z)) }
@inline(__always) private func md5G(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { y ^ (z & (x ^ y)) }
@inline(__always) private func md5H(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { x ^ y ^ z }
@inline(__always) private func md5I(_ x: UInt32, _ y: UInt32, _ z: UInt32) -> UInt32 { y ^ (x | ~z) }

@inline(__always)
private func md5Step(_ a: inout UInt32, _ b: UInt32, _ fxt: UInt32, _ s: UInt32) {
    a = b &+ rotl(a &+ fxt, s)
}

extension SHA1 {
    @inline(__always)
    static func compress(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        var (a, b, c, d, e) = state
        var p = blocks
        for _ in 0..<count {
            let (a0, b0, c0, d0, e0) = (a, b, c, d, e)
            var w0 = loadBE32(p, 0)
            sha1Round(a, &b, c, d, &e, 0x5A827999 &+ w0, sha1Ch)
            var w1 = loadBE32(p, 4)
            sha1Round(e, &a, b, c, &d, 0x5A827999 &+ w1, sha1Ch)
            var w2 = loadBE32(p, 8)
            sha1Round(d, &e, a, b, &c, 0x5A827999 &+ w2, sha1Ch)
            var w3 = loadBE32(p, 12)
            sha1Round(c, &d, e, a, &b, 0x5A827999 &+ w3, sha1Ch)
            var w4 = loadBE32(p, 16)
            sha1Round(b, &c, d, e, &a, 0x5A827999 &+ w4, sha1Ch)
            var w5 = loadBE32(p, 20)
            sha1Round(a, &b, c, d, &e, 0x5A827999 &+ w5, sha1Ch)
            var w6 = loadBE32(p, 24)
            sha1Round(e, &a, b, c, &d, 0x5A827999 &+ w6, sha1Ch)
            var w7 = loadBE32(p, 28)
            sha1Round(d, &e, a, b, &c, 0x5A827999 &+ w7, sha1Ch)
            var w8 = loadBE32(p, 32)
            sha1Round(c, &d, e, a, &b, 0x5A827999 &+ w8, sha1Ch)
            var w9 = loadBE32(p, 36)
            sha1Round(b, &c, d, e, &a, 0x5A827999 &+ w9, sha1Ch)
            var w10 = loadBE32(p, 40)
            sha1Round(a, &b, c, d, &e, 0x5A827999 &+ w10, sha1Ch)
            var w11 = loadBE32(p, 44)
            sha1Round(e, &a, b, c, &d, 0x5A827999 &+ w11, sha1Ch)
            var w12 = loadBE32(p, 48)
            sha1Round(d, &e, a, b, &c, 0x5A827999 &+ w12, sha1Ch)
            var w13 = loadBE32(p, 52)
            sha1Round(c, &d, e, a, &b, 0x5A827999 &+ w13, sha1Ch)
            var w14 = loadBE32(p, 56)
            sha1Round(b, &c, d, e, &a, 0x5A827999 &+ w14, sha1Ch)
            var w15 = loadBE32(p, 60)
            sha1Round(a, &b, c, d, &e, 0x5A827999 &+ w15, sha1Ch)
            w0 = rotl(w13 ^ w8 ^ w2 ^ w0, 1)
            sha1Round(e, &a, b, c, &d, 0x5A827999 &+ w0, sha1Ch)
            w1 = rotl(w14 ^ w9 ^ w3 ^ w1, 1)
            sha1Round(d, &e, a, b, &c, 0x5A827999 &+ w1, sha1Ch)
            w2 = rotl(w15 ^ w10 ^ w4 ^ w2, 1)
            sha1Round(c, &d, e, a, &b, 0x5A827999 &+ w2, sha1Ch)
            w3 = rotl(w0 ^ w11 ^ w5 ^ w3, 1)
            sha1Round(b, &c, d, e, &a, 0x5A827999 &+ w3, sha1Ch)
            w4 = rotl(w1 ^ w12 ^ w6 ^ w4, 1)
            sha1Round(a, &b, c, d, &e, 0x6ED9EBA1 &+ w4, sha1Parity)
            w5 = rotl(w2 ^ w13 ^ w7 ^ w5, 1)
            sha1Round(e, &a, b, c, &d, 0x6ED9EBA1 &+ w5, sha1Parity)
            w6 = rotl(w3 ^ w14 ^ w8 ^ w6, 1)
            sha1Round(d, &e, a, b, &c, 0x6ED9EBA1 &+ w6, sha1Parity)
            w7 = rotl(w4 ^ w15 ^ w9 ^ w7, 1)
            sha1Round(c, &d, e, a, &b, 0x6ED9EBA1 &+ w7, sha1Parity)
            w8 = rotl(w5 ^ w0 ^ w10 ^ w8, 1)
            sha1Round(b, &c, d, e, &a, 0x6ED9EBA1 &+ w8, sha1Parity)
            w9 = rotl(w6 ^ w1 ^ w11 ^ w9, 1)
            sha1Round(a, &b, c, d, &e, 0x6ED9EBA1 &+ w9, sha1Parity)
            w10 = rotl(w7 ^ w2 ^ w12 ^ w10, 1)
            sha1Round(e, &a, b, c, &d, 0x6ED9EBA1 &+ w10, sha1Parity)
            w11 = rotl(w8 ^ w3 ^ w13 ^ w11, 1)
            sha1Round(d, &e, a, b, &c, 0x6ED9EBA1 &+ w11, sha1Parity)
            w12 = rotl(w9 ^ w4 ^ w14 ^ w12, 1)
            sha1Round(c, &d, e, a, &b, 0x6ED9EBA1 &+ w12, sha1Parity)
            w13 = rotl(w10 ^ w5 ^ w15 ^ w13, 1)
            sha1Round(b, &c, d, e, &a, 0x6ED9EBA1 &+ w13, sha1Parity)
            w14 = rotl(w11 ^ w6 ^ w0 ^ w14, 1)
            sha1Round(a, &b, c, d, &e, 0x6ED9EBA1 &+ w14, sha1Parity)
            w15 = rotl(w12 ^ w7 ^ w1 ^ w15, 1)
            sha1Round(e, &a, b, c, &d, 0x6ED9EBA1 &+ w15, sha1Parity)
            w0 = rotl(w13 ^ w8 ^ w2 ^ w0, 1)
            sha1Round(d, &e, a, b, &c, 0x6ED9EBA1 &+ w0, sha1Parity)
            w1 = rotl(w14 ^ w9 ^ w3 ^ w1, 1)
            sha1Round(c, &d, e, a, &b, 0x6ED9EBA1 &+ w1, sha1Parity)
            w2 = rotl(w15 ^ w10 ^ w4 ^ w2, 1)
            sha1Round(b, &c, d, e, &a, 0x6ED9EBA1 &+ w2, sha1Parity)
            w3 = rotl(w0 ^ w11 ^ w5 ^ w3, 1)
            sha1Round(a, &b, c, d, &e, 0x6ED9EBA1 &+ w3, sha1Parity)
            w4 = rotl(w1 ^ w12 ^ w6 ^ w4, 1)
            sha1Round(e, &a, b, c, &d, 0x6ED9EBA1 &+ w4, sha1Parity)
            w5 = rotl(w2 ^ w13 ^ w7 ^ w5, 1)
            sha1Round(d, &e, a, b, &c, 0x6ED9EBA1 &+ w5, sha1Parity)
            w6 = rotl(w3 ^ w14 ^ w8 ^ w6, 1)
            sha1Round(c, &d, e, a, &b, 0x6ED9EBA1 &+ w6, sha1Parity)
            w7 = rotl(w4 ^ w15 ^ w9 ^ w7, 1)
            sha1Round(b, &c, d, e, &a, 0x6ED9EBA1 &+ w7, sha1Parity)
            w8 = rotl(w5 ^ w0 ^ w10 ^ w8, 1)
            sha1Round(a, &b, c, d, &e, 0x8F1BBCDC &+ w8, sha1Maj)
            w9 = rotl(w6 ^ w1 ^ w11 ^ w9, 1)
            sha1Round(e, &a, b, c, &d, 0x8F1BBCDC &+ w9, sha1Maj)
            w10 = rotl(w7 ^ w2 ^ w12 ^ w10, 1)
            sha1Round(d, &e, a, b, &c, 0x8F1BBCDC &+ w10, sha1Maj)
            w11 = rotl(w8 ^ w3 ^ w13 ^ w11, 1)
            sha1Round(c, &d, e, a, &b, 0x8F1BBCDC &+ w11, sha1Maj)
            w12 = rotl(w9 ^ w4 ^ w14 ^ w12, 1)
            sha1Round(b, &c, d, e, &a, 0x8F1BBCDC &+ w12, sha1Maj)
            w13 = rotl(w10 ^ w5 ^ w15 ^ w13, 1)
            sha1Round(a, &b, c, d, &e, 0x8F1BBCDC &+ w13, sha1Maj)
            w14 = rotl(w11 ^ w6 ^ w0 ^ w14, 1)
            sha1Round(e, &a, b, c, &d, 0x8F1BBCDC &+ w14, sha1Maj)
            w15 = rotl(w12 ^ w7 ^ w1 ^ w15, 1)
            sha1Round(d, &e, a, b, &c, 0x8F1BBCDC &+ w15, sha1Maj)
            w0 = rotl(w13 ^ w8 ^ w2 ^ w0, 1)
            sha1Round(c, &d, e, a, &b, 0x8F1BBCDC &+ w0, sha1Maj)
            w1 = rotl(w14 ^ w9 ^ w3 ^ w1, 1)
            sha1Round(b, &c, d, e, &a, 0x8F1BBCDC &+ w1, sha1Maj)
            w2 = rotl(w15 ^ w10 ^ w4 ^ w2, 1)
            sha1Round(a, &b, c, d, &e, 0x8F1BBCDC &+ w2, sha1Maj)
            w3 = rotl(w0 ^ w11 ^ w5 ^ w3, 1)
            sha1Round(e, &a, b, c, &d, 0x8F1BBCDC &+ w3, sha1Maj)
            w4 = rotl(w1 ^ w12 ^ w6 ^ w4, 1)
            sha1Round(d, &e, a, b, &c, 0x8F1BBCDC &+ w4, sha1Maj)
            w5 = rotl(w2 ^ w13 ^ w7 ^ w5, 1)
            sha1Round(c, &d, e, a, &b, 0x8F1BBCDC &+ w5, sha1Maj)
            w6 = rotl(w3 ^ w14 ^ w8 ^ w6, 1)
            sha1Round(b, &c, d, e, &a, 0x8F1BBCDC &+ w6, sha1Maj)
            w7 = rotl(w4 ^ w15 ^ w9 ^ w7, 1)
            sha1Round(a, &b, c, d, &e, 0x8F1BBCDC &+ w7, sha1Maj)
            w8 = rotl(w5 ^ w0 ^ w10 ^ w8, 1)
            sha1Round(e, &a, b, c, &d, 0x8F1BBCDC &+ w8, sha1Maj)
            w9 = rotl(w6 ^ w1 ^ w11 ^ w9, 1)
            sha1Round(d, &e, a, b, &c, 0x8F1BBCDC &+ w9, sha1Maj)
            w10 = rotl(w7 ^ w2 ^ w12 ^ w10, 1)
            sha1Round(c, &d, e, a, &b, 0x8F1BBCDC &+ w10, sha1Maj)
            w11 = rotl(w8 ^ w3 ^ w13 ^ w11, 1)
            sha1Round(b, &c, d, e, &a, 0x8F1BBCDC &+ w11, sha1Maj)
            w12 = rotl(w9 ^ w4 ^ w14 ^ w12, 1)
            sha1Round(a, &b, c, d, &e, 0xCA62C1D6 &+ w12, sha1Parity)
            w13 = rotl(w10 ^ w5 ^ w15 ^ w13, 1)
            sha1Round(e, &a, b, c, &d, 0xCA62C1D6 &+ w13, sha1Parity)
            w14 = rotl(w11 ^ w6 ^ w0 ^ w14, 1)
            sha1Round(d, &e, a, b, &c, 0xCA62C1D6 &+ w14, sha1Parity)
            w15 = rotl(w12 ^ w7 ^ w1 ^ w15, 1)
            sha1Round(c, &d, e, a, &b, 0xCA62C1D6 &+ w15, sha1Parity)
            w0 = rotl(w13 ^ w8 ^ w2 ^ w0, 1)
            sha1Round(b, &c, d, e, &a, 0xCA62C1D6 &+ w0, sha1Parity)
            w1 = rotl(w14 ^ w9 ^ w3 ^ w1, 1)
            sha1Round(a, &b, c, d, &e, 0xCA62C1D6 &+ w1, sha1Parity)
            w2 = rotl(w15 ^ w10 ^ w4 ^ w2, 1)
            sha1Round(e, &a, b, c, &d, 0xCA62C1D6 &+ w2, sha1Parity)
            w3 = rotl(w0 ^ w11 ^ w5 ^ w3, 1)
            sha1Round(d, &e, a, b, &c, 0xCA62C1D6 &+ w3, sha1Parity)
            w4 = rotl(w1 ^ w12 ^ w6 ^ w4, 1)
            sha1Round(c, &d, e, a, &b, 0xCA62C1D6 &+ w4, sha1Parity)
            w5 = rotl(w2 ^ w13 ^ w7 ^ w5, 1)
            sha1Round(b, &c, d, e, &a, 0xCA62C1D6 &+ w5, sha1Parity)
            w6 = rotl(w3 ^ w14 ^ w8 ^ w6, 1)
            sha1Round(a, &b, c, d, &e, 0xCA62C1D6 &+ w6, sha1Parity)
            w7 = rotl(w4 ^ w15 ^ w9 ^ w7, 1)
            sha1Round(e, &a, b, c, &d, 0xCA62C1D6 &+ w7, sha1Parity)
            w8 = rotl(w5 ^ w0 ^ w10 ^ w8, 1)
            sha1Round(d, &e, a, b, &c, 0xCA62C1D6 &+ w8, sha1Parity)
            w9 = rotl(w6 ^ w1 ^ w11 ^ w9, 1)
            sha1Round(c, &d, e, a, &b, 0xCA62C1D6 &+ w9, sha1Parity)
            w10 = rotl(w7 ^ w2 ^ w12 ^ w10, 1)
            sha1Round(b, &c, d, e, &a, 0xCA62C1D6 &+ w10, sha1Parity)
            w11 = rotl(w8 ^ w3 ^ w13 ^ w11, 1)
            sha1Round(a, &b, c, d, &e, 0xCA62C1D6 &+ w11, sha1Parity)
            w12 = rotl(w9 ^ w4 ^ w14 ^ w12, 1)
            sha1Round(e, &a, b, c, &d, 0xCA62C1D6 &+ w12, sha1Parity)
            w13 = rotl(w10 ^ w5 ^ w15 ^ w13, 1)
            sha1Round(d, &e, a, b, &c, 0xCA62C1D6 &+ w13, sha1Parity)
            w14 = rotl(w11 ^ w6 ^ w0 ^ w14, 1)
            sha1Round(c, &d, e, a, &b, 0xCA62C1D6 &+ w14, sha1Parity)
            w15 = rotl(w12 ^ w7 ^ w1 ^ w15, 1)
            sha1Round(b, &c, d, e, &a, 0xCA62C1D6 &+ w15, sha1Parity)
            a = a &+ a0; b = b &+ b0; c = c &+ c0; d = d &+ d0; e = e &+ e0
            p += 64
        }
        state = (a, b, c, d, e)
    }
}

extension SHA256 {
    /// Whether the CPU's SHA instructions do the compression (checked once).
    static let usesHardware = quire_sha256_hardware() != 0

    static func compress(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        guard usesHardware else { return compressPortable(&state, blocks, count) }
        withUnsafeMutableBytes(of: &state) { words in
            quire_sha256_blocks(words.baseAddress!.assumingMemoryBound(to: UInt32.self), blocks.assumingMemoryBound(to: UInt8.self), count)
        }
    }

    static func compressPortable(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        var (a, b, c, d, e, f, g, h) = state
        var p = blocks
        for _ in 0..<count {
            let (a0, b0, c0, d0, e0, f0, g0, h0) = (a, b, c, d, e, f, g, h)
            var w0 = loadBE32(p, 0)
            sha256Round(a, b, c, &d, e, f, g, &h, 0x428A2F98 &+ w0)
            var w1 = loadBE32(p, 4)
            sha256Round(h, a, b, &c, d, e, f, &g, 0x71374491 &+ w1)
            var w2 = loadBE32(p, 8)
            sha256Round(g, h, a, &b, c, d, e, &f, 0xB5C0FBCF &+ w2)
            var w3 = loadBE32(p, 12)
            sha256Round(f, g, h, &a, b, c, d, &e, 0xE9B5DBA5 &+ w3)
            var w4 = loadBE32(p, 16)
            sha256Round(e, f, g, &h, a, b, c, &d, 0x3956C25B &+ w4)
            var w5 = loadBE32(p, 20)
            sha256Round(d, e, f, &g, h, a, b, &c, 0x59F111F1 &+ w5)
            var w6 = loadBE32(p, 24)
            sha256Round(c, d, e, &f, g, h, a, &b, 0x923F82A4 &+ w6)
            var w7 = loadBE32(p, 28)
            sha256Round(b, c, d, &e, f, g, h, &a, 0xAB1C5ED5 &+ w7)
            var w8 = loadBE32(p, 32)
            sha256Round(a, b, c, &d, e, f, g, &h, 0xD807AA98 &+ w8)
            var w9 = loadBE32(p, 36)
            sha256Round(h, a, b, &c, d, e, f, &g, 0x12835B01 &+ w9)
            var w10 = loadBE32(p, 40)
            sha256Round(g, h, a, &b, c, d, e, &f, 0x243185BE &+ w10)
            var w11 = loadBE32(p, 44)
            sha256Round(f, g, h, &a, b, c, d, &e, 0x550C7DC3 &+ w11)
            var w12 = loadBE32(p, 48)
            sha256Round(e, f, g, &h, a, b, c, &d, 0x72BE5D74 &+ w12)
            var w13 = loadBE32(p, 52)
            sha256Round(d, e, f, &g, h, a, b, &c, 0x80DEB1FE &+ w13)
            var w14 = loadBE32(p, 56)
            sha256Round(c, d, e, &f, g, h, a, &b, 0x9BDC06A7 &+ w14)
            var w15 = loadBE32(p, 60)
            sha256Round(b, c, d, &e, f, g, h, &a, 0xC19BF174 &+ w15)
            w0 = sha256Sigma1(w14) &+ w9 &+ sha256Sigma0(w1) &+ w0
            sha256Round(a, b, c, &d, e, f, g, &h, 0xE49B69C1 &+ w0)
            w1 = sha256Sigma1(w15) &+ w10 &+ sha256Sigma0(w2) &+ w1
            sha256Round(h, a, b, &c, d, e, f, &g, 0xEFBE4786 &+ w1)
            w2 = sha256Sigma1(w0) &+ w11 &+ sha256Sigma0(w3) &+ w2
            sha256Round(g, h, a, &b, c, d, e, &f, 0x0FC19DC6 &+ w2)
            w3 = sha256Sigma1(w1) &+ w12 &+ sha256Sigma0(w4) &+ w3
            sha256Round(f, g, h, &a, b, c, d, &e, 0x240CA1CC &+ w3)
            w4 = sha256Sigma1(w2) &+ w13 &+ sha256Sigma0(w5) &+ w4
            sha256Round(e, f, g, &h, a, b, c, &d, 0x2DE92C6F &+ w4)
            w5 = sha256Sigma1(w3) &+ w14 &+ sha256Sigma0(w6) &+ w5
            sha256Round(d, e, f, &g, h, a, b, &c, 0x4A7484AA &+ w5)
            w6 = sha256Sigma1(w4) &+ w15 &+ sha256Sigma0(w7) &+ w6
            sha256Round(c, d, e, &f, g, h, a, &b, 0x5CB0A9DC &+ w6)
            w7 = sha256Sigma1(w5) &+ w0 &+ sha256Sigma0(w8) &+ w7
            sha256Round(b, c, d, &e, f, g, h, &a, 0x76F988DA &+ w7)
            w8 = sha256Sigma1(w6) &+ w1 &+ sha256Sigma0(w9) &+ w8
            sha256Round(a, b, c, &d, e, f, g, &h, 0x983E5152 &+ w8)
            w9 = sha256Sigma1(w7) &+ w2 &+ sha256Sigma0(w10) &+ w9
            sha256Round(h, a, b, &c, d, e, f, &g, 0xA831C66D &+ w9)
            w10 = sha256Sigma1(w8) &+ w3 &+ sha256Sigma0(w11) &+ w10
            sha256Round(g, h, a, &b, c, d, e, &f, 0xB00327C8 &+ w10)
            w11 = sha256Sigma1(w9) &+ w4 &+ sha256Sigma0(w12) &+ w11
            sha256Round(f, g, h, &a, b, c, d, &e, 0xBF597FC7 &+ w11)
            w12 = sha256Sigma1(w10) &+ w5 &+ sha256Sigma0(w13) &+ w12
            sha256Round(e, f, g, &h, a, b, c, &d, 0xC6E00BF3 &+ w12)
            w13 = sha256Sigma1(w11) &+ w6 &+ sha256Sigma0(w14) &+ w13
            sha256Round(d, e, f, &g, h, a, b, &c, 0xD5A79147 &+ w13)
            w14 = sha256Sigma1(w12) &+ w7 &+ sha256Sigma0(w15) &+ w14
            sha256Round(c, d, e, &f, g, h, a, &b, 0x06CA6351 &+ w14)
            w15 = sha256Sigma1(w13) &+ w8 &+ sha256Sigma0(w0) &+ w15
            sha256Round(b, c, d, &e, f, g, h, &a, 0x14292967 &+ w15)
            w0 = sha256Sigma1(w14) &+ w9 &+ sha256Sigma0(w1) &+ w0
            sha256Round(a, b, c, &d, e, f, g, &h, 0x27B70A85 &+ w0)
            w1 = sha256Sigma1(w15) &+ w10 &+ sha256Sigma0(w2) &+ w1
            sha256Round(h, a, b, &c, d, e, f, &g, 0x2E1B2138 &+ w1)
            w2 = sha256Sigma1(w0) &+ w11 &+ sha256Sigma0(w3) &+ w2
            sha256Round(g, h, a, &b, c, d, e, &f, 0x4D2C6DFC &+ w2)
            w3 = sha256Sigma1(w1) &+ w12 &+ sha256Sigma0(w4) &+ w3
            sha256Round(f, g, h, &a, b, c, d, &e, 0x53380D13 &+ w3)
            w4 = sha256Sigma1(w2) &+ w13 &+ sha256Sigma0(w5) &+ w4
            sha256Round(e, f, g, &h, a, b, c, &d, 0x650A7354 &+ w4)
            w5 = sha256Sigma1(w3) &+ w14 &+ sha256Sigma0(w6) &+ w5
            sha256Round(d, e, f, &g, h, a, b, &c, 0x766A0ABB &+ w5)
            w6 = sha256Sigma1(w4) &+ w15 &+ sha256Sigma0(w7) &+ w6
            sha256Round(c, d, e, &f, g, h, a, &b, 0x81C2C92E &+ w6)
            w7 = sha256Sigma1(w5) &+ w0 &+ sha256Sigma0(w8) &+ w7
            sha256Round(b, c, d, &e, f, g, h, &a, 0x92722C85 &+ w7)
            w8 = sha256Sigma1(w6) &+ w1 &+ sha256Sigma0(w9) &+ w8
            sha256Round(a, b, c, &d, e, f, g, &h, 0xA2BFE8A1 &+ w8)
            w9 = sha256Sigma1(w7) &+ w2 &+ sha256Sigma0(w10) &+ w9
            sha256Round(h, a, b, &c, d, e, f, &g, 0xA81A664B &+ w9)
            w10 = sha256Sigma1(w8) &+ w3 &+ sha256Sigma0(w11) &+ w10
            sha256Round(g, h, a, &b, c, d, e, &f, 0xC24B8B70 &+ w10)
            w11 = sha256Sigma1(w9) &+ w4 &+ sha256Sigma0(w12) &+ w11
            sha256Round(f, g, h, &a, b, c, d, &e, 0xC76C51A3 &+ w11)
            w12 = sha256Sigma1(w10) &+ w5 &+ sha256Sigma0(w13) &+ w12
            sha256Round(e, f, g, &h, a, b, c, &d, 0xD192E819 &+ w12)
            w13 = sha256Sigma1(w11) &+ w6 &+ sha256Sigma0(w14) &+ w13
            sha256Round(d, e, f, &g, h, a, b, &c, 0xD6990624 &+ w13)
            w14 = sha256Sigma1(w12) &+ w7 &+ sha256Sigma0(w15) &+ w14
            sha256Round(c, d, e, &f, g, h, a, &b, 0xF40E3585 &+ w14)
            w15 = sha256Sigma1(w13) &+ w8 &+ sha256Sigma0(w0) &+ w15
            sha256Round(b, c, d, &e, f, g, h, &a, 0x106AA070 &+ w15)
            w0 = sha256Sigma1(w14) &+ w9 &+ sha256Sigma0(w1) &+ w0
            sha256Round(a, b, c, &d, e, f, g, &h, 0x19A4C116 &+ w0)
            w1 = sha256Sigma1(w15) &+ w10 &+ sha256Sigma0(w2) &+ w1
            sha256Round(h, a, b, &c, d, e, f, &g, 0x1E376C08 &+ w1)
            w2 = sha256Sigma1(w0) &+ w11 &+ sha256Sigma0(w3) &+ w2
            sha256Round(g, h, a, &b, c, d, e, &f, 0x2748774C &+ w2)
            w3 = sha256Sigma1(w1) &+ w12 &+ sha256Sigma0(w4) &+ w3
            sha256Round(f, g, h, &a, b, c, d, &e, 0x34B0BCB5 &+ w3)
            w4 = sha256Sigma1(w2) &+ w13 &+ sha256Sigma0(w5) &+ w4
            sha256Round(e, f, g, &h, a, b, c, &d, 0x391C0CB3 &+ w4)
            w5 = sha256Sigma1(w3) &+ w14 &+ sha256Sigma0(w6) &+ w5
            sha256Round(d, e, f, &g, h, a, b, &c, 0x4ED8AA4A &+ w5)
            w6 = sha256Sigma1(w4) &+ w15 &+ sha256Sigma0(w7) &+ w6
            sha256Round(c, d, e, &f, g, h, a, &b, 0x5B9CCA4F &+ w6)
            w7 = sha256Sigma1(w5) &+ w0 &+ sha256Sigma0(w8) &+ w7
            sha256Round(b, c, d, &e, f, g, h, &a, 0x682E6FF3 &+ w7)
            w8 = sha256Sigma1(w6) &+ w1 &+ sha256Sigma0(w9) &+ w8
            sha256Round(a, b, c, &d, e, f, g, &h, 0x748F82EE &+ w8)
            w9 = sha256Sigma1(w7) &+ w2 &+ sha256Sigma0(w10) &+ w9
            sha256Round(h, a, b, &c, d, e, f, &g, 0x78A5636F &+ w9)
            w10 = sha256Sigma1(w8) &+ w3 &+ sha256Sigma0(w11) &+ w10
            sha256Round(g, h, a, &b, c, d, e, &f, 0x84C87814 &+ w10)
            w11 = sha256Sigma1(w9) &+ w4 &+ sha256Sigma0(w12) &+ w11
            sha256Round(f, g, h, &a, b, c, d, &e, 0x8CC70208 &+ w11)
            w12 = sha256Sigma1(w10) &+ w5 &+ sha256Sigma0(w13) &+ w12
            sha256Round(e, f, g, &h, a, b, c, &d, 0x90BEFFFA &+ w12)
            w13 = sha256Sigma1(w11) &+ w6 &+ sha256Sigma0(w14) &+ w13
            sha256Round(d, e, f, &g, h, a, b, &c, 0xA4506CEB &+ w13)
            w14 = sha256Sigma1(w12) &+ w7 &+ sha256Sigma0(w15) &+ w14
            sha256Round(c, d, e, &f, g, h, a, &b, 0xBEF9A3F7 &+ w14)
            w15 = sha256Sigma1(w13) &+ w8 &+ sha256Sigma0(w0) &+ w15
            sha256Round(b, c, d, &e, f, g, h, &a, 0xC67178F2 &+ w15)
            a = a &+ a0; b = b &+ b0; c = c &+ c0; d = d &+ d0
            e = e &+ e0; f = f &+ f0; g = g &+ g0; h = h &+ h0
            p += 64
        }
        state = (a, b, c, d, e, f, g, h)
    }
}

extension MD5 {
    @inline(__always)
    static func compress(_ state: inout State, _ blocks: UnsafeRawPointer, _ count: Int) {
        var (a, b, c, d) = state
        var p = blocks
        for _ in 0..<count {
            let (a0, b0, c0, d0) = (a, b, c, d)
            let x0 = loadLE32(p, 0)
            let x1 = loadLE32(p, 4)
            let x2 = loadLE32(p, 8)
            let x3 = loadLE32(p, 12)
            let x4 = loadLE32(p, 16)
            let x5 = loadLE32(p, 20)
            let x6 = loadLE32(p, 24)
            let x7 = loadLE32(p, 28)
            let x8 = loadLE32(p, 32)
            let x9 = loadLE32(p, 36)
            let x10 = loadLE32(p, 40)
            let x11 = loadLE32(p, 44)
            let x12 = loadLE32(p, 48)
            let x13 = loadLE32(p, 52)
            let x14 = loadLE32(p, 56)
            let x15 = loadLE32(p, 60)
            md5Step(&a, b, md5F(b, c, d) &+ x0 &+ 0xD76AA478, 7)
            md5Step(&d, a, md5F(a, b, c) &+ x1 &+ 0xE8C7B756, 12)
            md5Step(&c, d, md5F(d, a, b) &+ x2 &+ 0x242070DB, 17)
            md5Step(&b, c, md5F(c, d, a) &+ x3 &+ 0xC1BDCEEE, 22)
            md5Step(&a, b, md5F(b, c, d) &+ x4 &+ 0xF57C0FAF, 7)
            md5Step(&d, a, md5F(a, b, c) &+ x5 &+ 0x4787C62A, 12)
            md5Step(&c, d, md5F(d, a, b) &+ x6 &+ 0xA8304613, 17)
            md5Step(&b, c, md5F(c, d, a) &+ x7 &+ 0xFD469501, 22)
            md5Step(&a, b, md5F(b, c, d) &+ x8 &+ 0x698098D8, 7)
            md5Step(&d, a, md5F(a, b, c) &+ x9 &+ 0x8B44F7AF, 12)
            md5Step(&c, d, md5F(d, a, b) &+ x10 &+ 0xFFFF5BB1, 17)
            md5Step(&b, c, md5F(c, d, a) &+ x11 &+ 0x895CD7BE, 22)
            md5Step(&a, b, md5F(b, c, d) &+ x12 &+ 0x6B901122, 7)
            md5Step(&d, a, md5F(a, b, c) &+ x13 &+ 0xFD987193, 12)
            md5Step(&c, d, md5F(d, a, b) &+ x14 &+ 0xA679438E, 17)
            md5Step(&b, c, md5F(c, d, a) &+ x15 &+ 0x49B40821, 22)
            md5Step(&a, b, md5G(b, c, d) &+ x1 &+ 0xF61E2562, 5)
            md5Step(&d, a, md5G(a, b, c) &+ x6 &+ 0xC040B340, 9)
            md5Step(&c, d, md5G(d, a, b) &+ x11 &+ 0x265E5A51, 14)
            md5Step(&b, c, md5G(c, d, a) &+ x0 &+ 0xE9B6C7AA, 20)
            md5Step(&a, b, md5G(b, c, d) &+ x5 &+ 0xD62F105D, 5)
            md5Step(&d, a, md5G(a, b, c) &+ x10 &+ 0x02441453, 9)
            md5Step(&c, d, md5G(d, a, b) &+ x15 &+ 0xD8A1E681, 14)
            md5Step(&b, c, md5G(c, d, a) &+ x4 &+ 0xE7D3FBC8, 20)
            md5Step(&a, b, md5G(b, c, d) &+ x9 &+ 0x21E1CDE6, 5)
            md5Step(&d, a, md5G(a, b, c) &+ x14 &+ 0xC33707D6, 9)
            md5Step(&c, d, md5G(d, a, b) &+ x3 &+ 0xF4D50D87, 14)
            md5Step(&b, c, md5G(c, d, a) &+ x8 &+ 0x455A14ED, 20)
            md5Step(&a, b, md5G(b, c, d) &+ x13 &+ 0xA9E3E905, 5)
            md5Step(&d, a, md5G(a, b, c) &+ x2 &+ 0xFCEFA3F8, 9)
            md5Step(&c, d, md5G(d, a, b) &+ x7 &+ 0x676F02D9, 14)
            md5Step(&b, c, md5G(c, d, a) &+ x12 &+ 0x8D2A4C8A, 20)
            md5Step(&a, b, md5H(b, c, d) &+ x5 &+ 0xFFFA3942, 4)
            md5Step(&d, a, md5H(a, b, c) &+ x8 &+ 0x8771F681, 11)
            md5Step(&c, d, md5H(d, a, b) &+ x11 &+ 0x6D9D6122, 16)
            md5Step(&b, c, md5H(c, d, a) &+ x14 &+ 0xFDE5380C, 23)
            md5Step(&a, b, md5H(b, c, d) &+ x1 &+ 0xA4BEEA44, 4)
            md5Step(&d, a, md5H(a, b, c) &+ x4 &+ 0x4BDECFA9, 11)
            md5Step(&c, d, md5H(d, a, b) &+ x7 &+ 0xF6BB4B60, 16)
            md5Step(&b, c, md5H(c, d, a) &+ x10 &+ 0xBEBFBC70, 23)
            md5Step(&a, b, md5H(b, c, d) &+ x13 &+ 0x289B7EC6, 4)
            md5Step(&d, a, md5H(a, b, c) &+ x0 &+ 0xEAA127FA, 11)
            md5Step(&c, d, md5H(d, a, b) &+ x3 &+ 0xD4EF3085, 16)
            md5Step(&b, c, md5H(c, d, a) &+ x6 &+ 0x04881D05, 23)
            md5Step(&a, b, md5H(b, c, d) &+ x9 &+ 0xD9D4D039, 4)
            md5Step(&d, a, md5H(a, b, c) &+ x12 &+ 0xE6DB99E5, 11)
            md5Step(&c, d, md5H(d, a, b) &+ x15 &+ 0x1FA27CF8, 16)
            md5Step(&b, c, md5H(c, d, a) &+ x2 &+ 0xC4AC5665, 23)
            md5Step(&a, b, md5I(b, c, d) &+ x0 &+ 0xF4292244, 6)
            md5Step(&d, a, md5I(a, b, c) &+ x7 &+ 0x432AFF97, 10)
            md5Step(&c, d, md5I(d, a, b) &+ x14 &+ 0xAB9423A7, 15)
            md5Step(&b, c, md5I(c, d, a) &+ x5 &+ 0xFC93A039, 21)
            md5Step(&a, b, md5I(b, c, d) &+ x12 &+ 0x655B59C3, 6)
            md5Step(&d, a, md5I(a, b, c) &+ x3 &+ 0x8F0CCC92, 10)
            md5Step(&c, d, md5I(d, a, b) &+ x10 &+ 0xFFEFF47D, 15)
            md5Step(&b, c, md5I(c, d, a) &+ x1 &+ 0x85845DD1, 21)
            md5Step(&a, b, md5I(b, c, d) &+ x8 &+ 0x6FA87E4F, 6)
            md5Step(&d, a, md5I(a, b, c) &+ x15 &+ 0xFE2CE6E0, 10)
            md5Step(&c, d, md5I(d, a, b) &+ x6 &+ 0xA3014314, 15)
            md5Step(&b, c, md5I(c, d, a) &+ x13 &+ 0x4E0811A1, 21)
            md5Step(&a, b, md5I(b, c, d) &+ x4 &+ 0xF7537E82, 6)
            md5Step(&d, a, md5I(a, b, c) &+ x11 &+ 0xBD3AF235, 10)
            md5Step(&c, d, md5I(d, a, b) &+ x2 &+ 0x2AD7D2BB, 15)
            md5Step(&b, c, md5I(c, d, a) &+ x9 &+ 0xEB86D391, 21)
            a = a &+ a0; b = b &+ b0; c = c &+ c0; d = d &+ d0
            p += 64
        }
        state = (a, b, c, d)
    }
}
