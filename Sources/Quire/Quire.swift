// The public face of the toolkit. `import Quire` gives the reader-facing API: the session types
// of this module (Book, Pagination, PageAddress, Target, PaginationSettings, WriteRequest,
// PageProblem, BookFailure) and the value types below from the stages. The stages' own
// machinery (shaping, the cascade, locks, shards, hashing, byte helpers) stays in their modules,
// which a program that needs them imports by name.

// Errors, limits and the JSON edge.
@_exported import enum QuireCore.QuireError
@_exported import struct QuireCore.Warning
@_exported import struct QuireCore.Limits
@_exported import enum QuireCore.JSON
@_exported import struct QuireCore.JSONReader
@_exported import struct QuireCore.JSONNull
// Page geometry and reading settings.
@_exported import struct QuireLayout.PageProfile
@_exported import struct QuireLayout.LayoutSettings
@_exported import enum QuireLayout.WritingModeChoice
@_exported import enum QuireStyle.TextAlign
@_exported import struct QuireLayout.SettleLimits
@_exported import protocol QuireLayout.ImageMeasurer
@_exported import enum QuireLayout.ImageMeasurement
@_exported import typealias QuireLayout.ImageSizes
@_exported import struct QuireLayout.SpacingStatistics
// Painting and page preparation.
@_exported import struct QuirePaint.PaintSettings
@_exported import enum QuirePaint.Theme
@_exported import struct QuirePreparation.Bitmap
@_exported import struct QuirePreparation.PagePreparation
@_exported import enum QuirePreparation.Rotation
@_exported import enum QuirePreparation.SplitMode
@_exported import enum QuirePDF.PDFScale
// Positions and maps.
@_exported import struct QuirePositions.Locator
@_exported import struct QuirePositions.PositionMap
@_exported import class QuirePositions.MapIndex
@_exported import enum QuirePositions.SpreadMode
@_exported import enum QuirePositions.FlowMode
@_exported import struct QuirePositions.Spread
@_exported import struct QuireDocument.Position
@_exported import enum QuirePositions.PositionsConvention
@_exported import enum QuirePositions.Locate
// The layout cache (batch runs, repeated paginations).
@_exported import class QuireLayoutCache.LayoutCache
// Reports.
@_exported import struct QuireStyle.CSSReport

/// The library's version (`quire --version`).
public enum QuireVersion {
    public static let string = "0.1.0"
}
