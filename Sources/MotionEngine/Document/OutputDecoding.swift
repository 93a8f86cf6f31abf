/// `output.format`, `output.simplify`, `output.svg`, `output.css` and `output.lottie` (docs/exports.md).
extension DocumentDecoder {
    /// The largest tolerance accepted (values themselves are within ±1e15).
    static let maximumTolerance = 1e15

    func decodeFormats(_ reader: ObjectReader, into output: inout OutputOptions, _ diagnostics: Diagnostics) {
        if let name = reader.string("format") {
            if let format = OutputFormat(rawValue: name) {
                output.format = format
            } else {
                let names = OutputFormat.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
                diagnostics.invalid(reader.pointer("format"), "unknown format '\(name)'; expected one of \(names)")
            }
        }

        if let simplify = reader.object("simplify") {
            let tolerance = simplify.number("tolerance", required: true)
            var interpolation = SimplifyOptions.Interpolation.linear
            if let name = simplify.string("interpolation") {
                if let value = SimplifyOptions.Interpolation(rawValue: name) {
                    interpolation = value
                } else {
                    diagnostics.invalid(simplify.pointer("interpolation"), "unknown interpolation '\(name)'; expected 'linear' or 'cubic'")
                }
            }
            simplify.finish()
            if let tolerance {
                if !(tolerance > 0) {
                    diagnostics.invalid(simplify.pointer("tolerance"), "must be greater than 0, not \(format(tolerance))")
                } else if tolerance > Self.maximumTolerance {
                    diagnostics.invalid(simplify.pointer("tolerance"), "must be at most 1e15, not \(format(tolerance))")
                } else {
                    output.simplify = SimplifyOptions(tolerance: tolerance, interpolation: interpolation)
                }
            }
            if output.format == .csv {
                diagnostics.invalid(reader.pointer("simplify"), "csv has one row per frame and cannot be simplified; use the json format for reduced keyframes")
            } else if output.format == .json, output.layout == .frames {
                diagnostics.invalid(reader.pointer("simplify"), "the frames layout has one row per frame and cannot be simplified; use the tracks layout")
            }
        }

        if let svg = reader.object("svg") {
            let range = SVGOptions.sizeRange
            output.svg = SVGOptions(width: svg.number("width", in: range), height: svg.number("height", in: range))
            svg.finish()
            if output.format != .svg {
                diagnostics.invalid(reader.pointer("svg"), "applies to the svg format only (output.format is '\(output.format.rawValue)')")
            }
        }

        if output.schedule, output.format != .json {
            diagnostics.invalid(reader.pointer("schedule"), "the schedule is written in the json format only (output.format is '\(output.format.rawValue)')")
        }

        output.css = reader.value("css")
        output.lottie = reader.value("lottie")
        if output.css != nil, output.format != .css, output.format != .waapi {
            diagnostics.invalid(reader.pointer("css"), "applies to the css and waapi formats only (output.format is '\(output.format.rawValue)')")
        }
        if output.lottie != nil, output.format != .lottie {
            diagnostics.invalid(reader.pointer("lottie"), "applies to the lottie format only (output.format is '\(output.format.rawValue)')")
        }
    }
}
