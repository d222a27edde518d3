import QuireCore

/// Something an element's style asks for that layout draws on other elements but not on this
/// one (an image layer on an inline box, say). The box tree says where; the CSS report then
/// counts the declarations that asked for it as unsupported (`CSSReport.reclassify`).
public enum UnhonouredFeature: Sendable, Hashable, CaseIterable {
    /// `background-image` (images and gradients).
    case backgroundImage
    /// `position: relative` and its offsets.
    case offsets
    /// `width`, `height` and their minimums and maximums.
    case size
    case border
    case padding
    case backgroundColor
    case corners
    case shadow

    var properties: [PropertyID] {
        switch self {
        case .backgroundImage: return [.backgroundImage]
        case .offsets: return [.position, .top, .right, .bottom, .left]
        case .size: return [.width, .height, .minWidth, .minHeight, .maxWidth, .maxHeight]
        case .border:
            return [.borderTopWidth, .borderRightWidth, .borderBottomWidth, .borderLeftWidth, .borderTopStyle, .borderRightStyle,
                .borderBottomStyle, .borderLeftStyle, .borderTopColor, .borderRightColor, .borderBottomColor, .borderLeftColor]
        case .padding: return [.paddingTop, .paddingRight, .paddingBottom, .paddingLeft]
        case .backgroundColor: return [.backgroundColor]
        case .corners: return [.borderTopLeftRadius, .borderTopRightRadius, .borderBottomRightRadius, .borderBottomLeftRadius]
        case .shadow: return [.boxShadow]
        }
    }

    /// The features an image in a line of text (or a positioned one) would show with `style`
    /// but that layout does not draw for it: its box's border, padding, background, corners and
    /// shadow.
    public static func undrawnDecorations(_ style: ComputedStyle) -> [UnhonouredFeature] {
        var features: [UnhonouredFeature] = []
        let sides = [(style.borderStyle.top, style.borderWidth.top), (style.borderStyle.right, style.borderWidth.right),
            (style.borderStyle.bottom, style.borderWidth.bottom), (style.borderStyle.left, style.borderWidth.left)]
        if sides.contains(where: { $0.0 != .none && $0.0 != .hidden && $0.1 > 0 }) { features.append(.border) }
        if [style.padding.top, style.padding.right, style.padding.bottom, style.padding.left].contains(where: { $0.resolve(against: 100) > 0 }) {
            features.append(.padding)
        }
        if !style.backgroundColor.isTransparent { features.append(.backgroundColor) }
        if style.backgroundGradient != nil || style.backgroundImageURLs.contains(where: { $0 != nil }) { features.append(.backgroundImage) }
        if !style.borderRadius.isSquare { features.append(.corners) }
        if !style.boxShadows.isEmpty { features.append(.shadow) }
        return features
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
