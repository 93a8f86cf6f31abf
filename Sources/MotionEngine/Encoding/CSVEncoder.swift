/// The `csv` format (docs/exports.md, RFC 4180): a header `time,<track path>,…`, then one row per
/// frame of the window, every line ending in CRLF. The columns are the tracks of the `json`
/// tracks layout, one per scalar channel: a colour is its `path.red`, `path.green`,
/// `path.blue`, `path.alpha` channels in 0…1 (or the components a path names, hue in
/// degrees), a composite one column per changing leaf (`frame.x`, `frame.width`).
/// Numbers are in their shortest round-trip form; a field holding a comma, a double quote,
/// CR or LF is quoted, with its quotes doubled. Events and `final` are not part of it.
public enum CSVEncoder: TimelineFormatEncoder {
    public static let contentType = "text/csv"

    public static func encode(timeline: Timeline) throws(DocumentError) -> [UInt8] {
        let (samples, overflow) = timeline.frameCount.multipliedReportingOverflow(by: timeline.tracks.count + 1)
        var w = JSONWriter(capacity: 256 + (overflow ? 2_000_000 : min(samples, 2_000_000)) * 20)
        w.raw("time")
        for track in timeline.tracks {
            w.byte(UInt8(ascii: ","))
            field(track.path, into: &w)
        }
        w.raw("\r\n")
        var values: [Double] = []
        var looks = PeriodicLook(every: TimelineEncoder.samplesPerLook)
        for k in 0..<timeline.frameCount {
            if looks.isRequested(after: timeline.tracks.count &+ 1) { throw Cancellation.stopped }
            let t = timeline.time(ofFrame: k)
            timeline.sample(at: t, into: &values)
            w.number(t)
            for value in values {
                w.byte(UInt8(ascii: ","))
                w.number(value)
            }
            w.raw("\r\n")
        }
        return w.bytes
    }

    /// A text field, quoted when RFC 4180 requires it.
    static func field(_ text: String, into w: inout JSONWriter) {
        let special: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "\""), 0x0D, 0x0A]
        guard text.utf8.contains(where: special.contains) else {
            for b in text.utf8 { w.byte(b) }
            return
        }
        w.byte(UInt8(ascii: "\""))
        for b in text.utf8 {
            if b == UInt8(ascii: "\"") { w.byte(b) }
            w.byte(b)
        }
        w.byte(UInt8(ascii: "\""))
    }
}
