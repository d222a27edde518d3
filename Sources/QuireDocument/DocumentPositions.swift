import QuireCore
import QuireXML

/// A semantic position: a spine item and a UTF-16 offset into its text content (every text node
/// under `<body>`, in document order). Every other form (CFI, XPointer, Locator) is a view of this.
public struct Position: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var spineIndex: Int
    public var offset: Int

    public init(spineIndex: Int, offset: Int) {
        self.spineIndex = spineIndex
        self.offset = offset
    }

    public static func < (lhs: Position, rhs: Position) -> Bool {
        (lhs.spineIndex, lhs.offset) < (rhs.spineIndex, rhs.offset)
    }

    public var description: String { "\(spineIndex):\(offset)" }
}

/// Text-node lookups over one content document.
public struct DocumentText: Sendable {
    public let document: ContentDocument
    /// Text nodes under body in document order, with their start offsets.
    public let nodes: [NodeID]
    public let starts: [Int]
    public let units: [UInt16]

    public init(_ document: ContentDocument) {
        self.document = document
        var nodes: [NodeID] = []
        var starts: [Int] = []
        var units: [UInt16] = []
        units.reserveCapacity(document.textLength)
        for index in 0..<document.textStarts.count where document.textStarts[index] >= 0 {
            let node = NodeID(Int32(index))
            nodes.append(node)
            starts.append(Int(document.textStarts[index]))
            document.tree.text(of: node).appendUTF16(to: &units)
        }
        self.nodes = nodes
        self.starts = starts
        self.units = units
    }

    public var length: Int { units.count }

    /// The text node holding `offset` (the last node starting at or before it) and the offset within it.
    public func node(at offset: Int) -> (node: NodeID, local: Int)? {
        guard !nodes.isEmpty else { return nil }
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        // Skip empty nodes that share a start with the next one.
        var index = low
        while index + 1 < starts.count && starts[index + 1] == starts[index] && starts[index + 1] <= offset { index += 1 }
        return (nodes[index], offset - starts[index])
    }

    /// Up to `length` units before, at and after an offset, for Locator text context.
    public func excerpt(at offset: Int, before: Int = 32, highlight: Int = 48, after: Int = 32) -> (before: String, highlight: String, after: String) {
        let position = min(max(offset, 0), units.count)
        let start = max(0, position - before)
        let middle = min(units.count, position + highlight)
        let end = min(units.count, middle + after)
        func text(_ range: Range<Int>) -> String {
            String.collapsingWhitespace(utf16: units[range])
        }
        return (text(start..<position), text(position..<middle), text(middle..<end))
    }
}
