import QuireCore
import QuireXML

/// META-INF/encryption.xml and the two font obfuscation algorithms. Any other algorithm is DRM.
public enum FontObfuscation {
    public static let idpfAlgorithm = "http://www.idpf.org/2008/embedding"
    public static let adobeAlgorithm = "http://ns.adobe.com/pdf/enc#RC"
    /// How many leading bytes each algorithm scrambles.
    public static let idpfLength = 1040
    public static let adobeLength = 1024

    static func parse(_ tree: XMLTree) -> [String: EncryptionAlgorithm] {
        var result: [String: EncryptionAlgorithm] = [:]
        guard let root = tree.root else { return result }
        for data in root.descendants("EncryptedData") {
            let algorithm = data.descendants("EncryptionMethod").first?.attribute("Algorithm")?.trimmingWhitespace() ?? ""
            guard let uri = data.descendants("CipherReference").first?.attribute("URI"),
                let target = Href.resolve(uri, relativeTo: "")
            else { continue }
            switch algorithm {
            case idpfAlgorithm: result[target.path] = .idpfObfuscation
            case adobeAlgorithm: result[target.path] = .adobeObfuscation
            default: result[target.path] = .other(algorithm)
            }
        }
        return result
    }

    /// IDPF key: SHA-1 of the unique identifier with XML whitespace removed.
    public static func idpfKey(uniqueIdentifier: String) -> [UInt8] {
        let stripped = uniqueIdentifier.unicodeScalars.filter { !$0.isXMLWhitespace }
        return SHA1.hash(Array(String(String.UnicodeScalarView(stripped)).utf8))
    }

    /// Adobe key: the 16 bytes of the book's UUID (`urn:uuid:…` identifier).
    public static func adobeKey(identifiers: [String]) -> [UInt8]? {
        for identifier in identifiers {
            var text = identifier.trimmingWhitespace().lowercased()
            if text.hasPrefix("urn:uuid:") { text.removeFirst(9) }
            let hex = text.filter { $0 != "-" }
            guard hex.count == 32, hex.allSatisfy(\.isHexDigit) else { continue }
            var key: [UInt8] = []
            var index = hex.startIndex
            while index < hex.endIndex {
                let next = hex.index(index, offsetBy: 2)
                key.append(UInt8(hex[index..<next], radix: 16)!)
                index = next
            }
            return key
        }
        return nil
    }

    /// XORs the first `length` bytes with the repeating key (the operation is its own inverse).
    public static func apply(key: [UInt8], length: Int, to bytes: inout [UInt8]) {
        guard !key.isEmpty else { return }
        let count = min(length, bytes.count)
        for index in 0..<count { bytes[index] ^= key[index % key.count] }
    }
}
