import Foundation

/// The `svg` format (docs/exports.md): a chart a person reads at a glance.
///
/// Every track has a lane of its own, one under the other, its line scaled to the track's own
/// range and labelled on the left with its path and range (`min … max`). A shared time axis
/// in seconds runs along the bottom with "nice" ticks (1, 2 or 5 × 10ⁿ s) and grid lines; the
/// events (unless `output.events` is false) are dashed vertical marks across every lane,
/// under the lines, labelled at the top with their type and motion (events at one instant
/// share a mark; a label that would overlap the previous one in its row is left out, the mark
/// stays; more than one mark per 12 px fades them, down to 15 % opacity).
///
/// The lines are not the frame samples joined up (which would cut a collision's turning
/// point between two frames) but the track reduced by `KeyframeReducer` to half a pixel of
/// its lane, so they are faithful at every instant. With `output.simplify` the plot shows
/// what the reduced keyframes do: the exact curve drawn wide and light, the keyframes'
/// interpolation on top (cubic as Bézier curves) with a dot on each keyframe, and their
/// count next to the range (at most two keyframes per pixel column, else a 422 naming
/// `/output/simplify/tolerance`). A track whose exact curve needs more than two points per
/// pixel column is drawn as its envelope (the least and greatest of four samples in each
/// column), and so is every track once the plot has spent `TimelineExport.maxTotalEvaluations`
/// on reductions. Finding the lanes' ranges and drawing envelopes has a budget of its own of
/// that size (`Plot.chargeDrawing`).
///
/// `output.svg`: `width` (default 960) and `height` (default: 96 px per lane plus the
/// axes), each 200…8192 px; every lane must be at least 24 px high, so one plot holds at
/// most 337 tracks (a 422 naming `/output/svg/height` otherwise).
public enum SVGEncoder: TimelineFormatEncoder {
    public static let contentType = "image/svg+xml"

    public static let defaultWidth = 960.0
    static let laneHeight = 96.0
    static let minimumLaneHeight = 24.0
    static let bottom = 44.0, left = 200.0, right = 24.0
    /// Above the lanes: three rows of event labels, or a small margin without events.
    static func top(_ timeline: Timeline) -> Double { timeline.options.events && !timeline.events.isEmpty ? 56 : 16 }
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]

    public static func encode(timeline: Timeline) throws(DocumentError) -> [UInt8] {
        let options = timeline.options.svg
        let lanes = max(1, timeline.tracks.count)
        let top = top(timeline)
        let width = options.width ?? defaultWidth
        let range = SVGOptions.sizeRange
        let height: Double
        if let given = options.height {
            height = given
        } else {
            height = min(range.upperBound, max(range.lowerBound, top + bottom + Double(lanes) * laneHeight))
        }
        let laneHeight = (height - top - bottom) / Double(lanes)
        guard laneHeight >= minimumLaneHeight else {
            let needed = (top + bottom + Double(lanes) * minimumLaneHeight).rounded(.up)
            let message = needed > range.upperBound
                ? "\(lanes) tracks need lanes of at least \(format(minimumLaneHeight)) px, \(format(needed)) px in all, more than the largest plot (\(format(range.upperBound)) px); animate fewer properties"
                : "\(lanes) tracks need lanes of at least \(format(minimumLaneHeight)) px: a height of at least \(format(needed))"
            throw DocumentError([Problem(pointer: "/output/svg/height", message: message, kind: .invalid)])
        }
        let plotWidth = width - left - right
        // At most two points per pixel column per lane, and the events: refuse before drawing.
        let perLane = 400 + 2 * plotWidth * 22 + (timeline.options.simplify == nil ? 0 : 2 * plotWidth * 48 + plotWidth / 3 * 40)
        let marks = timeline.options.events ? eventMarks(timeline) : []
        let estimate = 4096 + Double(lanes) * perLane + marks.reduce(0.0) { $0 + Double($1.bytes) }
        if estimate > Double(timeline.limits.maxResponseBytes) {
            throw DocumentError([Problem(pointer: "/output/svg/width", message: "the plot could take up to \(format(estimate.rounded(.up))) bytes, over the limit of \(timeline.limits.maxResponseBytes) bytes (max-response-bytes); use a narrower plot, fewer tracks or leave out events", kind: .invalid)])
        }

        var plot = Plot(timeline: timeline, width: width, height: height, laneHeight: laneHeight, marks: marks)
        try plot.draw()
        return plot.out.bytes
    }

    /// One dashed event mark: the events at one instant.
    struct EventMark {
        let time: Double
        /// Every event's type and motion (until the list passes 80 characters), for `<title>`.
        var title: String
        /// The label drawn above the lanes (at most 40 characters).
        var name: String { SVGEncoder.clipped(title, to: 40) }
        /// The most bytes the mark takes: its line, its title and its label, escaped.
        var bytes: Int { 320 + 2 * SVGEncoder.escapedLength(title) }
    }

    /// The longest motion id a mark names in full (the events of the `json` answer carry it
    /// whole): a 50,000-character id on 2,500 events made a 630 MB plot of a 50 KB document.
    static let maxMarkedName = 120

    static func eventMarks(_ timeline: Timeline) -> [EventMark] {
        var marks: [EventMark] = []
        for event in timeline.events {
            let name = clipped("\(event.kind.rawValue) \(event.motion)", to: maxMarkedName)
            if let last = marks.last, abs(last.time - event.time) <= timeEpsilon {
                if last.title.unicodeScalars.count < 80 { marks[marks.count - 1].title += ", " + name }
            } else {
                marks.append(EventMark(time: event.time, title: name))
            }
        }
        return marks
    }

    /// `text` cut to at most `limit` Unicode scalars, the last of them `…` when cut.
    static func clipped(_ text: String, to limit: Int) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > limit else { return text }
        var view = String.UnicodeScalarView(scalars.prefix(limit - 1))
        view.append("…")
        return String(view)
    }

    /// The bytes `escape(_:_:)` writes for `text`.
    static func escapedLength(_ text: String) -> Int {
        var count = 0
        escape(text) { count += $0.count }
        return count
    }

    /// Text content or an attribute value, XML-escaped, handed to `write` in pieces;
    /// characters XML 1.0 cannot hold (controls other than tab and line ends, U+FFFE, U+FFFF)
    /// become U+FFFD, tabs and line ends spaces. Walks the UTF-8 bytes: a `String` per
    /// scalar made a 62 MB plot of event titles take 2.15 s (its json 0.20 s).
    static func escape(_ text: String, _ write: (UnsafeBufferPointer<UInt8>) -> Void) {
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            func flush(_ end: Int) {
                if end > runStart { write(UnsafeBufferPointer(rebasing: bytes[runStart..<end])) }
            }
            func put(_ replacement: StaticString) {
                write(UnsafeBufferPointer(start: replacement.utf8Start, count: replacement.utf8CodeUnitCount))
            }
            var i = 0
            while i < bytes.count {
                let b = bytes[i]
                var replacement: StaticString?
                var width = 1
                switch b {
                case UInt8(ascii: "&"): replacement = "&amp;"
                case UInt8(ascii: "<"): replacement = "&lt;"
                case UInt8(ascii: ">"): replacement = "&gt;"
                case UInt8(ascii: "\""): replacement = "&quot;"
                case UInt8(ascii: "'"): replacement = "&apos;"
                case 0x09, 0x0A, 0x0D: replacement = " "
                case 0x00..<0x20: replacement = "\u{FFFD}"
                case 0xEF where i + 2 < bytes.count && bytes[i + 1] == 0xBF && (bytes[i + 2] == 0xBE || bytes[i + 2] == 0xBF):
                    replacement = "\u{FFFD}"  // U+FFFE, U+FFFF
                    width = 3
                default: break
                }
                if let replacement {
                    flush(i)
                    put(replacement)
                    runStart = i + width
                }
                i += width
            }
            flush(bytes.count)
        }
    }

    struct Plot {
        let timeline: Timeline
        let width: Double, height: Double, laneHeight: Double
        var out = JSONWriter(capacity: 1 << 16)
        var spent = 0
        /// Evaluations spent finding the lanes' ranges and drawing envelopes (`chargeDrawing`).
        var drawSpent = 0

        /// The event marks to draw (none when `output.events` is false).
        let marks: [EventMark]

        init(timeline: Timeline, width: Double, height: Double, laneHeight: Double, marks: [EventMark]) {
            self.timeline = timeline
            self.marks = marks
            self.width = width
            self.height = height
            self.laneHeight = laneHeight
        }

        var plotWidth: Double { width - SVGEncoder.left - SVGEncoder.right }
        var top: Double { SVGEncoder.top(timeline) }
        var start: Double { timeline.window.start }
        var span: Double { timeline.window.end - timeline.window.start }

        func x(_ t: Double) -> Double {
            span > 0 ? SVGEncoder.left + (t - start) / span * plotWidth : SVGEncoder.left
        }

        mutating func text(_ s: String) { out.bytes.append(contentsOf: s.utf8) }

        /// Text content or an attribute value, XML-escaped; characters XML 1.0 cannot hold
        /// become U+FFFD.
        mutating func escaped(_ s: String) {
            SVGEncoder.escape(s) { out.bytes.append(contentsOf: $0) }
        }

        /// A coordinate with one decimal.
        mutating func coordinate(_ value: Double) {
            let tenths = (value * 10).rounded()
            guard tenths.isFinite, abs(tenths) < 1e12 else { text("0"); return }
            var n = Int(tenths)
            if n < 0 { text("-"); n = -n }
            text(String(n / 10))
            if n % 10 != 0 { text("." + String(n % 10)) }
        }

        mutating func draw() throws(DocumentError) {
            text(#"<?xml version="1.0" encoding="UTF-8"?>"#)
            text("\n")
            text(#"<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width=""#)
            coordinate(width)
            text(#"" height=""#)
            coordinate(height)
            text(#"" viewBox="0 0 "#)
            coordinate(width)
            text(" ")
            coordinate(height)
            text(#"" font-family="Helvetica, Arial, sans-serif" font-size="12">"#)
            text("\n<title>Timeline: \(timeline.tracks.count) track\(timeline.tracks.count == 1 ? "" : "s"), \(label(start)) to \(label(timeline.window.end)) s</title>\n")
            text(##"<rect width="100%" height="100%" fill="#ffffff"/>"##)
            text("\n")
            drawAxis()
            // The marks under the lines.
            if timeline.options.events { drawEvents() }
            for (index, track) in timeline.tracks.enumerated() {
                try drawLane(index, track)
            }
            text("</svg>\n")
        }

        /// 1, 2 or 5 × 10ⁿ: about one tick per 100 px, and at least two ticks.
        func tickStep() -> Double {
            guard span > 1e-9 else { return 1 }
            let raw = span / max(2, (plotWidth / 100).rounded(.down))
            var power = 1.0
            while power * 10 <= raw { power *= 10 }
            while power > raw { power /= 10 }
            for factor in [1.0, 2, 5, 10] where power * factor >= raw { return power * factor }
            return power * 10
        }

        mutating func drawAxis() {
            let plotBottom = height - SVGEncoder.bottom
            text(##"<g class="axis" stroke="#999999" stroke-width="1">"##)
            text("\n<line x1=\"\(SVGEncoder.left)\" y1=\"")
            coordinate(plotBottom)
            text("\" x2=\"")
            coordinate(SVGEncoder.left + plotWidth)
            text("\" y2=\"")
            coordinate(plotBottom)
            text("\"/>\n")
            let step = tickStep()
            var ticks: [Double] = []
            if span > 1e-9 {
                var k = (start / step).rounded(.up)
                while k * step <= timeline.window.end + step * 1e-9, ticks.count < 200 {
                    ticks.append(k * step)
                    k += 1
                }
            } else {
                ticks = [start]
            }
            for t in ticks {
                text("<line stroke=\"#e6e6e6\" x1=\"")
                coordinate(x(t))
                text("\" y1=\"\(top)\" x2=\"")
                coordinate(x(t))
                text("\" y2=\"")
                coordinate(plotBottom)
                text("\"/><line x1=\"")
                coordinate(x(t))
                text("\" y1=\"")
                coordinate(plotBottom)
                text("\" x2=\"")
                coordinate(x(t))
                text("\" y2=\"")
                coordinate(plotBottom + 5)
                text("\"/>\n")
            }
            text("</g>\n<g class=\"ticks\" fill=\"#333333\" text-anchor=\"middle\">\n")
            let decimals = step >= 1 ? 0 : min(12, Int((-log10(step)).rounded(.up)))
            for t in ticks {
                text("<text x=\"")
                coordinate(x(t))
                text("\" y=\"")
                coordinate(plotBottom + 18)
                text("\">\(label(t, decimals: decimals))</text>\n")
            }
            text("</g>\n<text class=\"axis-title\" x=\"")
            coordinate(SVGEncoder.left + plotWidth / 2)
            text("\" y=\"")
            coordinate(height - 8)
            text("\" text-anchor=\"middle\" fill=\"#333333\">time (s)</text>\n")
        }

        /// A number for a label: `decimals` places, or four significant digits.
        func label(_ value: Double, decimals: Int? = nil) -> String {
            let places: Int
            if let decimals {
                places = min(12, decimals)
            } else if value == 0 || !value.isFinite {
                places = 0
            } else {
                places = max(0, min(12, 3 - Int(log10(abs(value)).rounded(.down))))
            }
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            let rounded = abs(value) < 1e15 ? (value * scale).rounded() / scale : value
            return format(rounded == 0 ? 0 : rounded)
        }

        /// The track's points: its reduction within `tolerance`, else (only when `required`
        /// is nil) its envelope per pixel column. A reduction the plot must draw (`required`,
        /// from `output.simplify`) that exceeds the limits is a 422 naming that field.
        mutating func curve(_ track: Track, tolerance: Double, interpolation: SimplifyOptions.Interpolation,
                            required: String? = nil) throws(DocumentError) -> (ReducedTrack?, [(Double, Double)]) {
            try Cancellation.check()
            // Each evaluation adds up the track's additive layers too; a reduction that fails
            // is charged all it was allowed (uncharged, 337 lanes of a jagged easing each spent
            // their whole allowance: 11 s for one plot).
            let cost = track.evaluationCost
            var limits = KeyframeReducer.Limits(maxKeyframes: Int(2 * plotWidth) + 16, maxEvaluations: 1_000_000)
            limits.maxEvaluations = max(0, min(limits.maxEvaluations, TimelineExport.maxTotalEvaluations - spent)) / cost
            if limits.maxEvaluations > 0, tolerance.isFinite, tolerance > 0 {
                if let reduced = try? KeyframeReducer.reduce(track: track, in: timeline, tolerance: tolerance,
                                                             interpolation: interpolation, limits: limits) {
                    spent += reduced.evaluations * cost
                    return (reduced, [])
                }
                spent += limits.maxEvaluations * cost
            }
            if let required {
                throw DocumentError([Problem(pointer: required, message: "track '\(track.path)' needs more than \(limits.maxKeyframes) keyframes (two per pixel column of the plot) or \(limits.maxEvaluations) curve evaluations to stay within \(format(tolerance)); use a larger tolerance", kind: .invalid)])
            }
            var points: [(Double, Double)] = []
            let columns = max(1, Int(plotWidth))
            // The envelope: 4 evaluations a pixel column.
            try chargeDrawing(4 * columns, track)
            for c in 0..<columns {
                let t0 = start + span * Double(c) / Double(columns), t1 = start + span * Double(c + 1) / Double(columns)
                var (low, high) = (Double.infinity, -Double.infinity)
                for j in 0...3 {
                    let v = track.value(at: t0 + (t1 - t0) * Double(j) / 3)
                    low = min(low, v)
                    high = max(high, v)
                }
                points.append((t0, low))
                points.append((t1, high))
            }
            spent += 4 * columns
            return (nil, points)
        }

        /// Charges `evaluations` of `track` (each its `evaluationCost`) to `drawSpent`, bounded
        /// by `TimelineExport.maxTotalEvaluations` as reductions are: the range scans and the
        /// envelopes, which are not reductions. Uncounted (only additive layers were), 336 lanes
        /// of path curves, whose reductions spent their budget before falling back to envelopes
        /// 4,500 px wide, took 8.6 s for one plot (found by an adversarial review), and with
        /// the lanes' values at their frames uncounted (left to `max-samples`), 20 path lanes
        /// of 100,000 frames 2.5 s (a ninth review).
        mutating func chargeDrawing(_ evaluations: Int, _ track: Track) throws(DocumentError) {
            let (weighted, overflow) = evaluations.multipliedReportingOverflow(by: track.evaluationCost)
            guard !overflow, drawSpent <= TimelineExport.maxTotalEvaluations - weighted else {
                throw DocumentError([Problem(pointer: "/output/format", message: "the plot needs more than \(TimelineExport.maxTotalEvaluations) curve evaluations in all to find its lanes' ranges and draw the envelopes of curves too jagged to reduce (track '\(track.path)' counts \(track.evaluationCost) at each point: one more for each additive layer, \(PathCurve.evaluationWeight) for a path curve); plot fewer tracks, a narrower plot or a shorter window", kind: .invalid)])
            }
            drawSpent += weighted
        }

        mutating func drawLane(_ index: Int, _ track: Track) throws(DocumentError) {
            let y0 = top + Double(index) * laneHeight
            let padding = min(8, laneHeight / 6)
            let inner = laneHeight - 2 * padding
            // The range: a scan of the window refined around its extremes, the event times
            // (where collisions turn), the frames and the drawn points (all exact values).
            var low = Double.infinity, high = -Double.infinity
            let scan = 512, refinements = 40
            let eventsScanned = min(timeline.events.count, 10_000)
            let framesScanned = timeline.frameCount <= 100_000 ? timeline.frameCount : 0
            try chargeDrawing(scan + 1 + 2 * (2 * refinements + 1) + eventsScanned + framesScanned, track)
            var argLow = start, argHigh = start
            for k in 0...scan {
                let t = start + span * Double(k) / Double(scan)
                let v = track.value(at: t)
                if v < low { (low, argLow) = (v, t) }
                if v > high { (high, argHigh) = (v, t) }
            }
            for (at, sign) in [(argLow, -1.0), (argHigh, 1.0)] {
                var lo = max(start, at - span / Double(scan)), hi = min(timeline.window.end, at + span / Double(scan))
                for _ in 0..<refinements where hi > lo {
                    let m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3
                    if sign * track.value(at: m1) >= sign * track.value(at: m2) { hi = m2 } else { lo = m1 }
                }
                let v = track.value(at: (lo + hi) / 2)
                low = min(low, v)
                high = max(high, v)
            }
            for event in timeline.events.prefix(eventsScanned) {
                let v = track.value(at: event.time)
                low = min(low, v)
                high = max(high, v)
            }
            for k in 0..<framesScanned {
                let v = track.value(at: timeline.time(ofFrame: k))
                low = min(low, v)
                high = max(high, v)
            }
            let (exact, envelope) = try curve(track, tolerance: high > low ? 0.5 * (high - low) / inner : 1, interpolation: .linear)
            var keys: ReducedTrack?
            if let simplify = timeline.options.simplify {
                keys = try curve(track, tolerance: simplify.tolerance, interpolation: simplify.interpolation,
                                 required: "/output/simplify/tolerance").0
            }
            for v in (exact?.values ?? envelope.map(\.1)) + (keys?.values ?? []) {
                low = min(low, v)
                high = max(high, v)
            }
            let flat = !(high > low), middle = y0 + laneHeight / 2
            let y = { (v: Double) -> Double in flat ? middle : y0 + padding + (high - v) / (high - low) * inner }
            let colour = SVGEncoder.palette[index % SVGEncoder.palette.count]

            if index > 0 {
                text("<line stroke=\"#cccccc\" x1=\"0\" y1=\"")
                coordinate(y0)
                text("\" x2=\"")
                coordinate(width)
                text("\" y2=\"")
                coordinate(y0)
                text("\"/>\n")
            }
            text("<g class=\"track\">\n<text x=\"12\" y=\"")
            coordinate(y0 + laneHeight / 2 - (laneHeight >= 40 ? 2 : -4))
            text("\" font-weight=\"bold\" fill=\"\(colour)\">")
            var path = track.path
            if path.count > 28 { path = String(path.prefix(13)) + "…" + String(path.suffix(14)) }
            escaped(path)
            text("</text>\n")
            if laneHeight >= 40 {
                text("<text x=\"12\" y=\"")
                coordinate(y0 + laneHeight / 2 + 14)
                text("\" font-size=\"11\" fill=\"#555555\">")
                var range = flat ? label(low) : "\(label(low)) … \(label(high))"
                if let keys { range += ", \(keys.times.count) keyframes" }
                escaped(range)
                text("</text>\n")
            }
            if let keys {
                // The exact curve underneath, light; the keyframes' interpolation on top, with
                // a dot on each keyframe while they are at least three pixels apart on average.
                drawCurve(exact, envelope, colour: "#bbbbbb", width: 4, y)
                drawCurve(keys, [], colour: colour, width: 1.5, y)
                if Double(keys.times.count) <= plotWidth / 3 {
                    text("<g fill=\"\(colour)\">")
                    for k in keys.times.indices {
                        text("<circle r=\"2.5\" cx=\"")
                        coordinate(x(keys.times[k]))
                        text("\" cy=\"")
                        coordinate(y(keys.values[k]))
                        text("\"/>")
                    }
                    text("</g>\n")
                }
            } else {
                drawCurve(exact, envelope, colour: colour, width: 1.75, y)
            }
            text("</g>\n")
        }

        /// A reduced track as a path (straight segments, or Bézier curves for cubic Hermite
        /// segments), or the envelope's points joined.
        mutating func drawCurve(_ reduced: ReducedTrack?, _ envelope: [(Double, Double)], colour: String, width: Double,
                                _ y: (Double) -> Double) {
            text("<path fill=\"none\" stroke=\"\(colour)\" stroke-width=\"\(format(width))\" stroke-linejoin=\"round\" d=\"")
            if let reduced {
                for k in reduced.times.indices {
                    let (t, v) = (reduced.times[k], reduced.values[k])
                    if k == 0 {
                        text("M")
                    } else if let slopes = reduced.slopes, reduced.times[k - 1] < t {
                        let t0 = reduced.times[k - 1], v0 = reduced.values[k - 1], h = t - t0
                        text("C")
                        coordinate(x(t0 + h / 3)); text(",")
                        coordinate(y(v0 + slopes[k - 1].outgoing * h / 3)); text(" ")
                        coordinate(x(t - h / 3)); text(",")
                        coordinate(y(v - slopes[k].incoming * h / 3)); text(" ")
                    } else {
                        text("L")
                    }
                    coordinate(x(t))
                    text(",")
                    coordinate(y(v))
                }
                if reduced.times.count == 1 {
                    text("H")
                    coordinate(SVGEncoder.left + plotWidth)
                }
            } else {
                for (k, point) in envelope.enumerated() {
                    text(k == 0 ? "M" : "L")
                    coordinate(x(point.0))
                    text(",")
                    coordinate(y(point.1))
                }
            }
            text("\"/>\n")
        }

        mutating func drawEvents() {
            // Events at one instant share a mark and a label (`eventMarks`).
            guard !marks.isEmpty else { return }
            let plotBottom = height - SVGEncoder.bottom
            // Many marks close together fade, so that the lines stay readable through them.
            let opacity = min(1, max(0.15, plotWidth / 12 / Double(marks.count)))
            text("<g class=\"events\" font-size=\"10\" fill=\"#444444\" stroke-opacity=\"\(label(opacity, decimals: 2))\">\n")
            var rowEnds = [-Double.infinity, -Double.infinity, -Double.infinity]
            for (index, mark) in marks.enumerated() {
                let at = x(mark.time)
                text("<line stroke=\"#444444\" stroke-width=\"1\" stroke-dasharray=\"3,3\" x1=\"")
                coordinate(at)
                text("\" y1=\"\(top - 4)\" x2=\"")
                coordinate(at)
                text("\" y2=\"")
                coordinate(plotBottom)
                text("\"><title>")
                escaped("\(label(mark.time)) s: \(mark.title)")
                text("</title></line>\n")
                let name = mark.name
                // Labels start at their mark (end there near the right edge); a row is
                // skipped while its previous label still covers this one.
                let textWidth = Double(name.unicodeScalars.count) * 5.6
                let anchorEnd = at + textWidth > width - 4
                let from = anchorEnd ? at - textWidth : at
                guard let row = (0..<3).first(where: { rowEnds[($0 + index) % 3] < from - 4 }).map({ ($0 + index) % 3 }) else { continue }
                rowEnds[row] = from + textWidth
                text("<text x=\"")
                coordinate(anchorEnd ? at - 2 : at + 2)
                text("\" y=\"")
                coordinate(14 + Double(row) * 13)
                text(anchorEnd ? "\" text-anchor=\"end\">" : "\">")
                escaped(name)
                text("</text>\n")
            }
            text("</g>\n")
        }
    }
}
