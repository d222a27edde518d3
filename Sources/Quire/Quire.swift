// The public face of the toolkit: `import Quire` brings in every stage of the pipeline.
@_exported import QuireContainer
@_exported import QuireCore
@_exported import QuireDocument
@_exported import QuireImages
@_exported import QuireLayout
@_exported import QuirePaint
@_exported import QuirePDF
@_exported import QuirePositions
@_exported import QuirePreparation
@_exported import QuireText
@_exported import QuireStyle
@_exported import QuireXML

public enum QuireVersion {
    public static let string = "0.1.0"
}
