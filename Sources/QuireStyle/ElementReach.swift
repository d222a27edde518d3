import QuireCore

/// Something an element's style asks for that layout draws on other elements but not on this
/// one (the width of an inline-block in running text, say). The box tree says where; the CSS report then
/// counts the declarations that asked for it as unsupported (`CSSReport.reclassify`).
public enum UnhonouredFeature: Sendable, Hashable, CaseIterable {
    /// `width`, `height` and their minimums and maximums (of an inline-block in running text,
    /// whose content stays in the line).
    case size

    var properties: [PropertyID] {
        switch self {
        case .size: return [.width, .height, .minWidth, .minHeight, .maxWidth, .maxHeight]
        }
    }
}

/// One declaration as written in a book: its source (a sheet's path, `<style>#hash` for a
/// `<style>` block, `style=` and the text for a style attribute, as the CSS report keys them),
/// its block and place in the block, and its property name.
public struct WrittenDeclaration: Sendable, Hashable {
    public var source: String
    public var block: Int
    public var index: Int
    public var property: String
}

extension PropertyID {
    /// The longhands `UnhonouredFeature` covers: the cascade keeps their sources for the report.
    static let reportedPerElement: [PropertyID] = Array(Set(UnhonouredFeature.allCases.flatMap(\.properties))).sorted { $0.rawValue < $1.rawValue }
}
