import QuireCore
import QuireStyle
import QuireText

// A settled chapter in the binary form the layout cache keeps (QuireCore's ByteWriter). Faces
// are written once per chapter as their source (bundled or system file, or book font by archive
// path) and found again through the book's font collection, so a cached display list paints
// exactly what a fresh layout would. The parsed document is not kept: positions are cached
// beside the chapter, already computed.

extension ChapterLayout {
    /// Writes the chapter; `withItems` false leaves out the display lists and lines (what a
    /// map needs is the rest).
    public func encode(into writer: inout ByteWriter, withItems: Bool) {
        var faces: [String: Int] = [:]
        var table: [FontFace] = []
        if withItems {
            for page in pages {
                for item in page.items {
                    for run in item.glyphRuns where faces[run.face.key] == nil {
                        faces[run.face.key] = table.count
                        table.append(run.face)
                    }
                }
            }
        }
        writer.int(spineIndex)
        writer.string(href)
        writer.int(textLength)
        writer.int(imageCount)
        writer.int(missingGlyphs)
        writer.count(spacing.count)
        writer.double(spacing.sum)
        writer.double(spacing.sumOfSquares)
        writer.count(warnings.count)
        for warning in warnings {
            writer.string(warning.code)
            writer.string(warning.message)
        }
        writer.count(imagePaths.count)
        for path in imagePaths { writer.string(path) }
        writer.int(settle.images)
        writer.int(settle.measured)
        writer.int(settle.passes)
        writer.count(settle.unresolved.count)
        for item in settle.unresolved {
            writer.string(item.path)
            writer.string(item.reason)
        }
        writer.count(imageSizes.count)
        for (path, size) in imageSizes.sorted(by: { $0.key < $1.key }) {
            writer.string(path)
            writer.double(size.0)
            writer.double(size.1)
        }
        writer.bool(withItems)
        if withItems {
            writer.count(table.count)
            for face in table { Self.encode(face, into: &writer) }
        }
        writer.count(pages.count)
        for page in pages { page.encode(into: &writer, withItems: withItems, faces: faces) }
    }

    /// Reads a chapter written by `encode`. `face` finds a face again from its source; a face that
    /// cannot be found (a font file gone) makes the record unusable, as does damage.
    public init(decoding reader: inout ByteReader, face: (FontFace.Source, _ bold: Bool, _ italic: Bool) -> FontFace?) throws(ByteReader.Damaged) {
        let spineIndex = try reader.int()
        let href = try reader.string()
        let textLength = try reader.int()
        let imageCount = try reader.int()
        var chapter = ChapterLayout(spineIndex: spineIndex, href: href, pages: [], textLength: textLength, imageCount: imageCount, warnings: [])
        chapter.missingGlyphs = try reader.int()
        chapter.spacing.count = try reader.int()
        chapter.spacing.sum = try reader.double()
        chapter.spacing.sumOfSquares = try reader.double()
        for _ in 0..<(try reader.count(itemSize: 2)) { chapter.warnings.append(Warning(try reader.string(), try reader.string())) }
        for _ in 0..<(try reader.count()) { chapter.imagePaths.append(try reader.string()) }
        chapter.settle.images = try reader.int()
        chapter.settle.measured = try reader.int()
        chapter.settle.passes = try reader.int()
        for _ in 0..<(try reader.count(itemSize: 2)) {
            chapter.settle.unresolved.append(SettleRecord.Unresolved(path: try reader.string(), reason: try reader.string()))
        }
        for _ in 0..<(try reader.count(itemSize: 17)) {
            let path = try reader.string()
            chapter.imageSizes[path] = (try reader.double(), try reader.double())
        }
        var faces: [FontFace] = []
        let withItems = try reader.bool()
        if withItems {
            for _ in 0..<(try reader.count(itemSize: 5)) {
                guard let found = try Self.decodeFace(&reader, face: face) else { throw ByteReader.Damaged() }
                faces.append(found)
            }
        }
        for _ in 0..<(try reader.count(itemSize: 6)) { chapter.pages.append(try Page(decoding: &reader, withItems: withItems, faces: faces)) }
        self = chapter
    }

    private static func encode(_ face: FontFace, into writer: inout ByteWriter) {
        switch face.source {
        case .file(let path, let index):
            writer.int(0)
            writer.string(path)
            writer.int(index)
        case .memory(let name, _, let index):
            writer.int(1)
            writer.string(name)
            writer.int(index)
        }
        writer.bool(face.isBold)
        writer.bool(face.isItalic)
    }

    private static func decodeFace(
        _ reader: inout ByteReader, face: (FontFace.Source, Bool, Bool) -> FontFace?
    ) throws(ByteReader.Damaged) -> FontFace? {
        let kind = try reader.int()
        let name = try reader.string()
        let index = try reader.int()
        let bold = try reader.bool()
        let italic = try reader.bool()
        switch kind {
        case 0: return face(.file(path: name, index: index), bold, italic)
        case 1: return face(.memory(name: name, data: [], index: index), bold, italic)
        default: throw ByteReader.Damaged()
        }
    }
}

extension DisplayItem {
    var glyphRuns: [GlyphRun] {
        switch self {
        case .glyphs(let run): return [run]
        case .image(_, let alt?): return [alt]
        default: return []
        }
    }
}

extension Page {
    func encode(into writer: inout ByteWriter, withItems: Bool, faces: [String: Int]) {
        writer.int(spineIndex)
        writer.int(indexInChapter)
        writer.int(width)
        writer.int(height)
        writer.int(start)
        writer.int(end)
        writer.bool(vertical)
        writer.bool(columnsLeftToRight)
        guard withItems else { return }
        writer.bool(clip != nil)
        clip?.encode(into: &writer)
        writer.count(lines.count)
        for line in lines {
            line.rect.encode(into: &writer)
            for value in [line.start, line.end, line.paragraph, line.lineIndex, line.lineCount] { writer.int(value) }
        }
        writer.count(items.count)
        for item in items {
            switch item {
            case .glyphs(let run):
                writer.int(0)
                run.encode(into: &writer, faces: faces)
            case .fill(let rect, let color):
                writer.int(1)
                rect.encode(into: &writer)
                color.encode(into: &writer)
            case .stroke(let from, let to, let width, let color, let style):
                writer.int(2)
                for value in [from.x, from.y, to.x, to.y, width] { writer.double(value) }
                color.encode(into: &writer)
                writer.string(style.rawValue)
            case .gradient(let fill):
                writer.int(4)
                fill.area.encode(into: &writer)
                fill.box.encode(into: &writer)
                switch fill.shape {
                case .linear(let start, let end):
                    writer.int(0)
                    for value in [start.x, start.y, end.x, end.y] { writer.double(value) }
                case .radial(let rx, let ry):
                    writer.int(1)
                    writer.double(rx)
                    writer.double(ry)
                }
                writer.count(fill.colors.count)
                for (colour, position) in zip(fill.colors, fill.positions) {
                    colour.encode(into: &writer)
                    writer.double(position)
                }
                writer.bool(fill.repeating)
                writer.count(fill.radii.count)
                for radius in fill.radii { writer.double(radius) }
            case .box(let decorated):
                writer.int(5)
                decorated.area.encode(into: &writer)
                decorated.box.encode(into: &writer)
                writer.count(decorated.radii.count)
                for radius in decorated.radii { writer.double(radius) }
                decorated.background.encode(into: &writer)
                for width in [decorated.borderWidths.top, decorated.borderWidths.right, decorated.borderWidths.bottom, decorated.borderWidths.left] { writer.double(width) }
                for colour in [decorated.borderColors.top, decorated.borderColors.right, decorated.borderColors.bottom, decorated.borderColors.left] { colour.encode(into: &writer) }
                writer.string(decorated.borderStyle.rawValue)
                writer.count(decorated.shadows.count)
                for shadow in decorated.shadows {
                    for value in [shadow.x, shadow.y, shadow.blur, shadow.spread] { writer.double(value) }
                    shadow.color.encode(into: &writer)
                    writer.bool(shadow.inset)
                }
            case .backgroundImage(let fill):
                writer.int(6)
                fill.encode(into: &writer)
            case .image(let box, let alt):
                writer.int(3)
                box.rect.encode(into: &writer)
                writer.bool(box.resource != nil)
                if let resource = box.resource { writer.string(resource) }
                writer.string(box.alt)
                writer.string(box.state.rawValue)
                writer.bool(box.inlineData != nil)
                if let data = box.inlineData { writer.raw(data) }
                writer.double(box.opacity)
                writer.bool(alt != nil)
                alt?.encode(into: &writer, faces: faces)
            }
        }
    }

    init(decoding reader: inout ByteReader, withItems: Bool, faces: [FontFace]) throws(ByteReader.Damaged) {
        self.init(
            spineIndex: try reader.int(), indexInChapter: try reader.int(), width: try reader.int(), height: try reader.int(),
            items: [], lines: [], start: 0, end: 0)
        start = try reader.int()
        end = try reader.int()
        vertical = try reader.bool()
        columnsLeftToRight = try reader.bool()
        guard withItems else { return }
        if try reader.bool() { clip = try Rect(decoding: &reader) }
        for _ in 0..<(try reader.count(itemSize: 37)) {
            let rect = try Rect(decoding: &reader)
            let numbers = try (0..<5).map { _ throws(ByteReader.Damaged) in try reader.int() }
            lines.append(LineRecord(rect: rect, start: numbers[0], end: numbers[1], paragraph: numbers[2], lineIndex: numbers[3], lineCount: numbers[4]))
        }
        for _ in 0..<(try reader.count(itemSize: 2)) {
            switch try reader.int() {
            case 0:
                items.append(.glyphs(try GlyphRun(decoding: &reader, faces: faces)))
            case 1:
                items.append(.fill(try Rect(decoding: &reader), try Color(decoding: &reader)))
            case 2:
                let numbers = try (0..<5).map { _ throws(ByteReader.Damaged) in try reader.double() }
                let color = try Color(decoding: &reader)
                guard let style = BorderStyle(rawValue: try reader.string()) else { throw ByteReader.Damaged() }
                items.append(.stroke(from: Point(x: numbers[0], y: numbers[1]), to: Point(x: numbers[2], y: numbers[3]), width: numbers[4], color: color, style: style))
            case 3:
                let rect = try Rect(decoding: &reader)
                let resource = try reader.bool() ? try reader.string() : nil
                let alt = try reader.string()
                guard let state = ImageBox.State(rawValue: try reader.string()) else { throw ByteReader.Damaged() }
                var box = ImageBox(rect: rect, resource: resource, alt: alt, state: state)
                if try reader.bool() { box.inlineData = try reader.raw() }
                box.opacity = try reader.double()
                let altText = try reader.bool() ? try GlyphRun(decoding: &reader, faces: faces) : nil
                items.append(.image(box, altText: altText))
            case 4:
                let area = try Rect(decoding: &reader)
                let box = try Rect(decoding: &reader)
                let shape: GradientFill.Shape
                switch try reader.int() {
                case 0:
                    let numbers = try (0..<4).map { _ throws(ByteReader.Damaged) in try reader.double() }
                    shape = .linear(start: Point(x: numbers[0], y: numbers[1]), end: Point(x: numbers[2], y: numbers[3]))
                case 1: shape = .radial(rx: try reader.double(), ry: try reader.double())
                default: throw ByteReader.Damaged()
                }
                var colors: [Color] = []
                var positions: [Double] = []
                for _ in 0..<(try reader.count(itemSize: 12)) {
                    colors.append(try Color(decoding: &reader))
                    positions.append(try reader.double())
                }
                let repeating = try reader.bool()
                let radii = try (0..<(try reader.count(itemSize: 8))).map { _ throws(ByteReader.Damaged) in try reader.double() }
                items.append(.gradient(GradientFill(area: area, box: box, shape: shape, colors: colors, positions: positions, repeating: repeating, radii: radii)))
            case 6:
                items.append(.backgroundImage(try BackgroundImageFill(decoding: &reader)))
            case 5:
                let area = try Rect(decoding: &reader)
                let box = try Rect(decoding: &reader)
                let radii = try (0..<(try reader.count(itemSize: 8))).map { _ throws(ByteReader.Damaged) in try reader.double() }
                guard radii.count == 8 else { throw ByteReader.Damaged() }
                let background = try Color(decoding: &reader)
                let widths = try (0..<4).map { _ throws(ByteReader.Damaged) in try reader.double() }
                let colours = try (0..<4).map { _ throws(ByteReader.Damaged) in try Color(decoding: &reader) }
                guard let style = BorderStyle(rawValue: try reader.string()) else { throw ByteReader.Damaged() }
                var shadows: [DecoratedBox.Shadow] = []
                for _ in 0..<(try reader.count(itemSize: 37)) {
                    let numbers = try (0..<4).map { _ throws(ByteReader.Damaged) in try reader.double() }
                    shadows.append(DecoratedBox.Shadow(x: numbers[0], y: numbers[1], blur: numbers[2], spread: numbers[3], color: try Color(decoding: &reader), inset: try reader.bool()))
                }
                items.append(.box(DecoratedBox(
                    area: area, box: box, radii: radii, background: background,
                    borderWidths: Edges(top: widths[0], right: widths[1], bottom: widths[2], left: widths[3]),
                    borderColors: Edges(top: colours[0], right: colours[1], bottom: colours[2], left: colours[3]),
                    borderStyle: style, shadows: shadows)))
            default:
                throw ByteReader.Damaged()
            }
        }
    }
}

extension GlyphRun {
    func encode(into writer: inout ByteWriter, faces: [String: Int]) {
        writer.int(faces[face.key] ?? 0)
        writer.double(size)
        color.encode(into: &writer)
        writer.double(origin.x)
        writer.double(origin.y)
        writer.ints(placed.lazy.map(\.id))
        writer.floats(placed.lazy.map(\.x))
        writer.floats(placed.lazy.map(\.y))
        writer.bool(syntheticBold)
        writer.bool(syntheticItalic)
        writer.ints(placed.lazy.map(\.source).prefix(hasSources ? placed.count : 0))
        writer.int(Int(orientation.rawValue))
    }

    init(decoding reader: inout ByteReader, faces: [FontFace]) throws(ByteReader.Damaged) {
        let index = try reader.int()
        guard faces.indices.contains(index) else { throw ByteReader.Damaged() }
        let size = try reader.double()
        let color = try Color(decoding: &reader)
        let origin = Point(x: try reader.double(), y: try reader.double())
        self.init(
            face: faces[index], size: size, color: color, origin: origin, glyphs: try reader.ints(UInt32.self), xs: try reader.floats(),
            ys: try reader.floats(), syntheticBold: try reader.bool(), syntheticItalic: try reader.bool(), sources: try reader.ints(Int32.self))
        let raw = try reader.int()
        guard (0...2).contains(raw), let orientation = GlyphOrientation(rawValue: UInt8(raw)) else { throw ByteReader.Damaged() }
        self.orientation = orientation
    }
}

extension Rect {
    func encode(into writer: inout ByteWriter) {
        for value in [x, y, width, height] { writer.double(value) }
    }

    init(decoding reader: inout ByteReader) throws(ByteReader.Damaged) {
        self.init(x: try reader.double(), y: try reader.double(), width: try reader.double(), height: try reader.double())
    }
}

extension BackgroundImageFill {
    func encode(into writer: inout ByteWriter) {
        for rect in [area, clip, box] { rect.encode(into: &writer) }
        writer.count(radii.count)
        for radius in radii { writer.double(radius) }
        writer.bool(resource != nil)
        if let resource { writer.string(resource) }
        writer.bool(inlineData != nil)
        if let inlineData { writer.raw(inlineData) }
        writer.string(repeatMode.x.rawValue)
        writer.string(repeatMode.y.rawValue)
        func length(_ value: Length?) {
            switch value {
            case .px(let px)?: writer.int(1); writer.double(px)
            case .percent(let percent)?: writer.int(2); writer.double(percent)
            case nil: writer.int(0)
            }
        }
        length(position.x)
        writer.bool(position.xFromEnd)
        length(position.y)
        writer.bool(position.yFromEnd)
        switch size {
        case .contain: writer.int(0)
        case .cover: writer.int(1)
        case .lengths(let width, let height):
            writer.int(2)
            length(width)
            length(height)
        }
        writer.double(scale)
        writer.double(opacity)
        writer.bool(gradient != nil)
        if let gradient { gradient.encode(into: &writer) }
    }

    init(decoding reader: inout ByteReader) throws(ByteReader.Damaged) {
        area = try Rect(decoding: &reader)
        clip = try Rect(decoding: &reader)
        box = try Rect(decoding: &reader)
        radii = try (0..<(try reader.count(itemSize: 8))).map { _ throws(ByteReader.Damaged) in try reader.double() }
        resource = try reader.bool() ? try reader.string() : nil
        inlineData = try reader.bool() ? try reader.raw() : nil
        guard let x = BackgroundRepeat.Mode(rawValue: try reader.string()), let y = BackgroundRepeat.Mode(rawValue: try reader.string()) else {
            throw ByteReader.Damaged()
        }
        repeatMode = BackgroundRepeat(x: x, y: y)
        func length() throws(ByteReader.Damaged) -> Length? {
            switch try reader.int() {
            case 0: return nil
            case 1: return .px(try reader.double())
            case 2: return .percent(try reader.double())
            default: throw ByteReader.Damaged()
            }
        }
        guard let px = try length() else { throw ByteReader.Damaged() }
        let xFromEnd = try reader.bool()
        guard let py = try length() else { throw ByteReader.Damaged() }
        position = BackgroundPosition(x: px, xFromEnd: xFromEnd, y: py, yFromEnd: try reader.bool())
        switch try reader.int() {
        case 0: size = .contain
        case 1: size = .cover
        case 2:
            let width = try length()
            size = .lengths(width, try length())
        default: throw ByteReader.Damaged()
        }
        scale = try reader.double()
        opacity = try reader.double()
        gradient = try reader.bool() ? try Gradient(decoding: &reader) : nil
    }
}

extension Gradient {
    func encode(into writer: inout ByteWriter) {
        switch shape {
        case .linear(let degrees): writer.int(0); writer.double(degrees)
        case .linearToCorner(let horizontal, let vertical): writer.int(1); writer.int(horizontal); writer.int(vertical)
        case .radial(let circle): writer.int(2); writer.bool(circle)
        }
        writer.count(stops.count)
        for stop in stops {
            stop.color.encode(into: &writer)
            for value in [stop.fraction, stop.px] {
                writer.bool(value != nil)
                if let value { writer.double(value) }
            }
        }
        writer.bool(repeating)
    }

    init(decoding reader: inout ByteReader) throws(ByteReader.Damaged) {
        let shape: Shape
        switch try reader.int() {
        case 0: shape = .linear(degrees: try reader.double())
        case 1: shape = .linearToCorner(horizontal: try reader.int(), vertical: try reader.int())
        case 2: shape = .radial(circle: try reader.bool())
        default: throw ByteReader.Damaged()
        }
        let stops = try (0..<(try reader.count(itemSize: 6))).map { _ throws(ByteReader.Damaged) in
            let color = try Color(decoding: &reader)
            let fraction = try reader.bool() ? try reader.double() : nil
            return Stop(color: color, fraction: fraction, px: try reader.bool() ? try reader.double() : nil)
        }
        self.init(shape: shape, stops: stops, repeating: try reader.bool())
    }
}

extension Color {
    func encode(into writer: inout ByteWriter) {
        writer.raw([red, green, blue, alpha])
    }

    init(decoding reader: inout ByteReader) throws(ByteReader.Damaged) {
        let bytes = try reader.raw()
        guard bytes.count == 4 else { throw ByteReader.Damaged() }
        self.init(red: bytes[0], green: bytes[1], blue: bytes[2], alpha: bytes[3])
    }
}
