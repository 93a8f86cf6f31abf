/// The `svg` format (API §8.4).
public enum SVGEncoder: TimelineFormatEncoder {
    public static let contentType = "image/svg+xml"

    public static func encode(timeline: Timeline) throws(DocumentError) -> [UInt8] {
        throw DocumentError([Problem(pointer: "/output/format", message: "format 'svg' is not supported yet", kind: .invalid)])
    }
}
