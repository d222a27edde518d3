@preconcurrency import Glibc

import Quire

/// `quire render FILE.pdf`: wiring only; the work is in QuirePDF and QuirePositions.
enum PDFRenderCommand {
    static func run(_ options: Arguments, path: String, out: String) throws {
        var render = PDFRenderOptions()
        var profile: PDFPositionMap.Profile
        let hasGeometry = options.value("profile") != nil || options.value("size") != nil
        if let dpi = options.value("dpi"), !hasGeometry {
            guard let value = Double(dpi), value >= 36, value <= 1200 else { throw QuireError.usage("--dpi needs a number from 36 to 1200") }
            render.scale = .dpi(value)
            profile = .init(name: nil, width: nil, height: nil, dpi: value, gray: false, dither: false)
        } else {
            let (settings, name) = try RenderCommand.settings(options)
            render.scale = .fit(width: settings.profile.width, height: settings.profile.height)
            profile = .init(name: name, width: settings.profile.width, height: settings.profile.height, dpi: nil, gray: false, dither: false)
        }
        render.gray = options.flag("gray") || options.flag("dither")
        render.dither16 = options.flag("dither")
        profile.gray = render.gray
        profile.dither = render.dither16
        render.password = options.value("password")
        var rotation = Rotation.none
        if let text = options.value("rotate") {
            guard let degrees = Int(text), [0, 90, 180, 270].contains(degrees), let value = Rotation(degrees: degrees) else {
                throw QuireError.usage("--rotate is one of 0, 90, 180, 270")
            }
            rotation = value
        }
        var split = SplitMode.none
        if let text = options.value("split") {
            guard let value = SplitMode(rawValue: text) else { throw QuireError.usage("--split is one of ltr, rtl, none") }
            split = value
        }
        render.preparation = PagePreparation(rotate: rotation, crop: options.flag("crop"), split: split)
        let jobs = try RenderCommand.jobs(options)

        let info = try PDFDocument(path: path, password: render.password).info()
        let sourcePages = try RenderCommand.pageSelection(options.value("pages"), count: info.pageCount)
        let plan = PDFRenderer.plan(info, options: render)
        let digits = PositionMap.digits(forPageCount: plan.count)
        try Output.createDirectory(out)
        try Output.createDirectory(out + "/pages")
        // --map-only: the map without images (every image member null).
        let mapOnly = options.flag("map-only")
        let rendering = mapOnly ? [] : sourcePages
        let progress = Progress(total: rendering.count, enabled: isatty(2) == 1 && !options.flag("quiet"))
        try PDFRenderer.render(
            path: path, info: info, sourcePages: rendering, options: render, jobs: jobs,
            imagePath: { out + "/" + PositionMap.imageName(forPage: $0.index, digits: digits) }, progress: { progress.step() })
        progress.finish()
        let selected = Set(rendering)
        let rendered = Set(plan.filter { selected.contains($0.sourcePage) }.map(\.index))
        let identity = try PositionMap.BookIdentity.of(file: path)
        let map = PDFPositionMap.json(
            info: info, plan: plan, identity: identity, profile: profile, preparation: render.preparation,
            rendered: rendered.count == plan.count ? nil : rendered)
        try Output.writeAtomically(map, to: out + "/positions.json")
        if !options.flag("quiet") {
            fputs("quire: \(info.pageCount) PDF pages → \(plan.count) output pages, \(rendered.count) rendered → \(out)/\n", stderr)
        }
    }
}
