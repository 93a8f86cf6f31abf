import XCTest
@testable import MotionEngine

/// The css, waapi and lottie encoders (docs/exports.md) in the engine: keyframe counts, jumps,
/// the Hermite-to-Lottie handle conversion against the exact curve, and placeholder problems.
/// Chromium and python-lottie check the same answers in Tests/browser.
final class WebExportTests: XCTestCase {
    func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func testLinearTweenIsTwoKeyframesInCSS() throws {
        let timeline = try compile(#"{"target": {"x": 0}, "motion": {"type": "tween", "duration": 2, "properties": [{"path": "x", "to": 300}]}, "output": {"format": "css"}}"#)
        let css = text(try CSSEncoder.encode(timeline: timeline))
        XCTAssertTrue(css.contains("@property --x { syntax: '<number>'; inherits: false; initial-value: 0; }"), css)
        XCTAssertTrue(css.contains("  0% { --x: 0; }\n  100% { --x: 300; }\n"), css)
        XCTAssertTrue(css.contains("animation-duration: 2000ms;"), css)
    }

    func testJumpsKeepTheirInstantInCSSAndWAAPI() throws {
        let document = #"{"target": {"x": 0}, "motion": {"type": "tween", "duration": 1, "easing": "steps(2, jump-end)", "properties": [{"path": "x", "to": 10}]}, "output": {"format": "FORMAT"}}"#
        let css = text(try CSSEncoder.encode(timeline: compile(document.replacingOccurrences(of: "FORMAT", with: "css"))))
        // The value before the jump with step-start timing, then the value after it 1e-9 of the
        // window later: the value after shows from the jump's instant on.
        XCTAssertTrue(css.contains("  50% { --x: 0; animation-timing-function: step-start; }\n  50.0000000"), css)
        XCTAssertTrue(css.contains("% { --x: 5; }\n  99.9999999% { --x: 5; animation-timing-function: step-start; }\n  100% { --x: 10; }"), css)
        let waapi = try parseJSON(WAAPIEncoder.encode(timeline: compile(document.replacingOccurrences(of: "FORMAT", with: "waapi"))))
        let keyframes = waapi.objectValue?["animations"]?.arrayValue?.first?.objectValue?["keyframes"]?.arrayValue ?? []
        let pairs = keyframes.map { ($0.objectValue?["offset"]?.numberValue ?? -1, $0.objectValue?["--x"]?.stringValue ?? "") }
        XCTAssertEqual(pairs.map(\.0), [0, 0.5, 0.5, 1, 1])
        XCTAssertEqual(pairs.map(\.1), ["0", "0", "5", "5", "10"])
    }

    func testTemplatesFillEveryPlaceholderAndColours() throws {
        let timeline = try compile(##"{"target": {"p": {"x": 1, "y": 2}, "tint": "#336699"}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "p.x", "to": 5}]}, "output": {"format": "waapi", "css": {"declarations": {"transform": "translate({p.x}px, {p.y}px)", "color": "{tint}"}}}}"##)
        let waapi = try parseJSON(WAAPIEncoder.encode(timeline: timeline))
        XCTAssertEqual(waapi.objectValue?["style"]?.objectValue?["color"]?.stringValue, "rgb(51 102 153 / 1)")
        let keyframes = waapi.objectValue?["animations"]?.arrayValue?.first?.objectValue?["keyframes"]?.arrayValue ?? []
        XCTAssertEqual(keyframes.map { $0.objectValue?["transform"]?.stringValue ?? "" }, ["translate(1px, 2px)", "translate(5px, 2px)"])
    }

    func testPlaceholderProblemsName422Fields() throws {
        let base = #""target": {"x": 0, "p": {"x": 0, "y": 0}}, "motion": {"type": "tween", "duration": 1, "properties": [{"path": "x", "to": 1}]}"#
        for (css, pointer) in [(#"{"declarations": {"left": "{nope}px"}}"#, "/output/css/declarations/left"),
                               (#"{"declarations": {"left": "{p}px"}}"#, "/output/css/declarations/left"),
                               (#"{"declarations": {"left": "}"}}"#, "/output/css/declarations/left"),
                               (#"{"declarations": {"not a property": "1"}}"#, "/output/css/declarations/not a property"),
                               (#"{"colour": 1}"#, "/output/css/colour")] {
            let timeline = try compile("{\(base), \"output\": {\"format\": \"css\", \"css\": \(css)}}")
            XCTAssertThrowsError(try CSSEncoder.encode(timeline: timeline), css) { error in
                let problems = (error as? DocumentError)?.problems ?? []
                XCTAssertEqual(problems.map(\.pointer), [pointer], css)
                XCTAssertEqual((error as? DocumentError)?.status, 422)
            }
        }
    }

    /// Lottie's bezier easing with the handles of a Hermite segment is that segment: the
    /// exported keyframes of a spring, evaluated as Lottie does (solve x(s) = progress, take
    /// y(s)), stay within ε of the exact curve between the keyframes too.
    func testLottieHandlesReproduceTheExactCurve() throws {
        let timeline = try compile(#"{"fps": 30, "target": {"x": 0}, "motion": {"type": "spring", "response": 0.6, "dampingRatio": 0.35, "properties": [{"path": "x", "to": 200}]}, "output": {"format": "lottie", "lottie": {"width": 100, "height": 100, "layers": [{"position": ["{x}", 0]}]}}}"#)
        let lottie = try parseJSON(LottieEncoder.encode(timeline: timeline))
        let keys = lottie.objectValue?["layers"]?.arrayValue?.first?.objectValue?["ks"]?.objectValue?["p"]?.objectValue?["x"]?.objectValue?["k"]?.arrayValue ?? []
        XCTAssertGreaterThan(keys.count, 4)
        XCTAssertLessThan(keys.count * 3, timeline.frameCount, "far fewer keyframes than frames")
        let track = timeline.tracks[0]
        let epsilon = 0.05  // the default: min(0.05, range · 5e-4), the range being over 200
        var worst = 0.0
        for k in 0..<(keys.count - 1) {
            let key = keys[k].objectValue!, next = keys[k + 1].objectValue!
            let (f0, f1) = (key["t"]!.numberValue!, next["t"]!.numberValue!)
            let v0 = key["s"]!.arrayValue![0].numberValue!, v1 = next["s"]!.arrayValue![0].numberValue!
            guard f1 > f0, let o = key["o"]?.objectValue, let i = key["i"]?.objectValue else { continue }
            let (x1, y1) = (o["x"]!.arrayValue![0].numberValue!, o["y"]!.arrayValue![0].numberValue!)
            let (x2, y2) = (i["x"]!.arrayValue![0].numberValue!, i["y"]!.arrayValue![0].numberValue!)
            func bezier(_ s: Double, _ a: Double, _ b: Double) -> Double { 3 * (1 - s) * (1 - s) * s * a + 3 * (1 - s) * s * s * b + s * s * s }
            for j in 1..<16 {
                let progress = Double(j) / 16
                var (lo, hi) = (0.0, 1.0)
                for _ in 0..<60 { let mid = (lo + hi) / 2; if bezier(mid, x1, x2) < progress { lo = mid } else { hi = mid } }
                let value = v0 + (v1 - v0) * bezier((lo + hi) / 2, y1, y2)
                let t = timeline.window.start + (f0 + (f1 - f0) * progress) / timeline.fps
                worst = max(worst, abs(value - track.value(at: t)))
            }
        }
        XCTAssertLessThanOrEqual(worst, epsilon)
        XCTAssertGreaterThan(worst, 0)
    }

    func testMoreChannelsThanTheBudgetIsRefusedBeforeAnyWork() throws {
        let count = 2_001
        let target = (0..<count).map { #""p\#($0)": 0"# }.joined(separator: ",")
        let properties = (0..<count).map { #"{"path": "p\#($0)", "to": 1}"# }.joined(separator: ",")
        let timeline = try compile(#"{"target": {\#(target)}, "motion": {"type": "tween", "duration": 1, "properties": [\#(properties)]}, "output": {"format": "css"}}"#)
        XCTAssertThrowsError(try CSSEncoder.encode(timeline: timeline)) { error in
            let problem = (error as? DocumentError)?.problems.first
            XCTAssertEqual(problem?.pointer, "/output/format")
            XCTAssertTrue(problem?.message.contains("2001 animated channels") ?? false, problem?.message ?? "")
        }
    }

    /// A channel's evaluations count every curve they evaluate (`ExportChannel.cost`): a
    /// property under 1,000 additive layers cost about 7.8 s (debug) per placeholder naming
    /// it, 64 in one declaration over 8 minutes; 248 colour placeholders ran 57 s. Now a
    /// path named again in a template is one placeholder (reduced once), the curves are
    /// counted before any work, and a reduction charges its calls times the cost.
    func testAdditiveLayersAndColoursCountEveryCurveTheyEvaluate() throws {
        func layered(_ layers: Int, template: String) throws -> Timeline {
            let children = (0..<layers).map { #"{"type":"tween","duration":1,"additive":true,"easing":"ease-in-out","properties":[{"path":"x","to":\#($0 % 7 + 1)}]}"# }
            return try compile(#"{"fps":1,"target":{"x":0},"motion":{"type":"group","children":[\#(children.joined(separator: ","))]},"output":{"events":false,"final":false,"format":"css","css":{"declarations":{"--a":"\#(template)"}}}}"#)
        }
        let heavy = try layered(1_000, template: String(repeating: "{x}", count: 64))
        func assertRefused(_ attempt: @autoclosure () throws -> [UInt8], _ expected: String, _ format: String) {
            XCTAssertThrowsError(try attempt(), format) { error in
                let problem = (error as? DocumentError)?.problems.first
                XCTAssertEqual(problem?.pointer, "/output/format", format)
                XCTAssertTrue(problem?.message.contains(expected) ?? false, problem?.message ?? "")
            }
        }
        assertRefused(try CSSEncoder.encode(timeline: heavy), "1 animated channel to export, which evaluates 1001 curves", "css")
        assertRefused(try WAAPIEncoder.encode(timeline: heavy), "1 animated channel to export, which evaluates 1001 curves", "waapi")

        // Under the bound, a path named six times is reduced once: the same keyframes as the
        // template that names it once, each written six times. (Reduced six times, its 151
        // curves went past the 5,000,000 evaluations: a 422.)
        let once = text(try CSSEncoder.encode(timeline: try layered(150, template: "{x}")))
        let six = text(try CSSEncoder.encode(timeline: try layered(150, template: "{x} {x} {x} {x} {x} {x}")))
        let onceLines = once.split(separator: "\n").filter { $0.contains("--a:") }
        let sixLines = six.split(separator: "\n").filter { $0.contains("--a:") }
        XCTAssertGreaterThan(onceLines.count, 2, once)
        XCTAssertEqual(onceLines.count, sixLines.count, six)
        func split(_ line: Substring) -> (at: String, value: String) {
            let parts = line.components(separatedBy: "--a:")
            return (parts[0], parts[1].components(separatedBy: ";")[0].trimmingCharacters(in: .whitespaces))
        }
        for (a, b) in zip(onceLines, sixLines) {
            XCTAssertEqual(split(a).at, split(b).at)
            XCTAssertEqual(Array(repeating: split(a).value, count: 6).joined(separator: " "), split(b).value)
        }

        // 250 colours, four channels each (a call of one reads the colour's remembered
        // instant), and each colour's three tracks once (red, green and blue change; alpha
        // does not), rendered at each new instant: 1,750 curves.
        let colours = 250
        let target = (0..<colours).map { ##""c\##($0)":"#336699""## }.joined(separator: ",")
        let properties = (0..<colours).map { ##"{"path":"c\##($0)","to":"#ff9933"}"## }.joined(separator: ",")
        let declarations = (0..<colours).map { #""--c\#($0)":"{c\#($0)}""# }.joined(separator: ",")
        let tints = try compile(#"{"target":{\#(target)},"motion":{"type":"tween","duration":0.5,"properties":[\#(properties)]},"output":{"format":"css","css":{"declarations":{\#(declarations)}}}}"#)
        assertRefused(try CSSEncoder.encode(timeline: tints), "1000 animated channels to export, which evaluate 1750 curves", "colours")

        // A reduction and the default tolerance charge their calls times the channel's cost.
        let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]},"output":{"format":"css"}}"#)
        let channel = ExportChannel(value: { sin(6 * $0) }, hints: [], isConstant: false, cost: 7)
        var budget = ExportBudget(timeline: timeline)
        let tolerance = try ExportKeyframes.tolerance(channel, timeline, &budget)
        XCTAssertEqual(budget.evaluations, TimelineExport.maxTotalEvaluations - 7 * ExportKeyframes.rangeSamples)
        let before = budget.evaluations
        let reduced = try ExportKeyframes.reduce(channel, timeline, tolerance: tolerance, cubic: false, label: "x", budget: &budget)
        XCTAssertGreaterThan(reduced.evaluations, 0)
        XCTAssertEqual(before - budget.evaluations, 7 * reduced.evaluations)
    }

    /// A colour's channels, its components and every placeholder naming it share one render
    /// per instant (`ColourInstants`): a reduction asks channel by channel, at instants the
    /// channels share, and each used to render the whole colour again.
    func testColourExportsRenderEachInstantOnce() throws {
        let timeline = try compile(##"{"fps":60,"target":{"tint":"rgba(20,40,200,0.3)"},"motion":{"type":"tween","duration":2,"easing":"elastic.out","properties":[{"path":"tint","to":"#fa8c14"}]},"output":{"format":"css"}}"##)
        let resolver = ExportResolver(timeline)
        guard case .success(.colour(let rgba)) = resolver.resolve("tint"),
              case .success(.colour(let again)) = resolver.resolve("tint"),
              case .success(.number(let hue)) = resolver.resolve("tint.hue") else { return XCTFail("tint does not resolve to a colour and its hue") }
        let instants = resolver.colourInstants(output: 0)
        let output = timeline.outputs[0]
        let times = (0..<1_000).map { 2 * Double($0) / 999 }
        // Channel by channel, as the reductions ask: every value exact, one render an instant.
        for (index, channel) in (rgba + again).enumerated() {
            for t in times {
                let exact = output.colour { timeline.tracks[$0].value(at: t) }!
                XCTAssertEqual(channel.value(t), clamp01([exact.red, exact.green, exact.blue, exact.alpha][index % 4]), "channel \(index) at \(t)")
            }
        }
        for t in times { XCTAssertEqual(hue.value(t), output.colour { timeline.tracks[$0].value(at: t) }!.hsb.hue) }
        XCTAssertEqual(instants.renders, times.count)
        XCTAssertEqual(resolver.colourStore.kept, times.count)

        // The css export of the colour gives what it gave before, from far fewer renders than
        // its channels' calls (each of which used to render the colour).
        let css = text(try CSSEncoder.encode(timeline: try compile(##"{"fps":60,"target":{"tint":"rgba(20,40,200,0.3)"},"motion":{"type":"tween","duration":2,"easing":"elastic.out","properties":[{"path":"tint","to":"#fa8c14"}]},"output":{"format":"css","css":{"declarations":{"color":"{tint}","--a":"{tint.alpha}"}}}}"##)))
        XCTAssertTrue(css.contains("  0% { color: rgb(20 40 200 / 0.3); }"), css)
        XCTAssertTrue(css.contains("  100% { color: rgb(250 140 20 / 1); }"), css)
    }

    /// The colours of one export keep at most `Store.capacity` instants between them; past
    /// it they forget, and render again, with the same values.
    func testColourInstantsStayBounded() {
        let store = ColourInstants.Store()
        var calls = 0
        let red = ColourInstants(store: store, renderCost: 3) { t in calls += 1; return Colour(red: t, green: 0, blue: 0) }
        let blue = ColourInstants(store: store, renderCost: 5) { t in calls += 1; return Colour(red: 0, green: 0, blue: t) }
        let capacity = ColourInstants.Store.capacity
        let times = (0..<capacity).map { Double($0) * 1e-3 }
        for t in times { XCTAssertEqual(red.colour(at: t).red, t) }
        XCTAssertEqual(calls, capacity)
        XCTAssertEqual(store.kept, capacity)
        // The same instant twice in a row (a premultiplied channel) is one render.
        _ = red.colour(at: -1)
        _ = red.colour(at: -1)
        XCTAssertEqual(calls, capacity + 1)
        XCTAssertEqual(store.kept, 1, "the store was full: everything is forgotten and -1 kept")
        // Forgotten instants render again; the other colour starts from what is left.
        for t in times.prefix(100) { XCTAssertEqual(blue.colour(at: t).blue, t) }
        for t in times.prefix(100) { XCTAssertEqual(red.colour(at: t).red, t) }
        XCTAssertEqual(calls, capacity + 1 + 200)
        XCTAssertEqual(store.kept, 201)
        // Kept instants are not rendered again.
        for t in times.prefix(100) { XCTAssertEqual(blue.colour(at: t).blue, t) }
        XCTAssertEqual(calls, capacity + 201)
        XCTAssertEqual(red.renders + blue.renders, calls)
        // Every render is counted at its colour's cost, for the export's budget.
        XCTAssertEqual(store.renderedCurves, 3 * red.renders + 5 * blue.renders)
    }

    /// A colour channel is charged one curve a call, and each render of its colour the
    /// colour's tracks (`ExportBudget.charge`): the budget counts the work done, where it
    /// used to charge every call the colour's full cost.
    func testColourExportsAreChargedForTheirRenders() throws {
        let timeline = try compile(##"{"fps":60,"target":{"tint":"rgba(20,40,200,0.3)"},"motion":{"type":"tween","duration":2,"easing":"elastic.out","properties":[{"path":"tint","to":"#fa8c14"}]},"output":{"format":"css"}}"##)
        let resolver = ExportResolver(timeline)
        guard case .success(.colour(let rgba)) = resolver.resolve("tint") else { return XCTFail("tint does not resolve to a colour") }
        let instants = resolver.colourInstants(output: 0)
        XCTAssertEqual(instants.renderCost, 4, "red, green, blue and alpha tracks")
        XCTAssertEqual(rgba.map(\.cost), [1, 1, 1, 1])
        XCTAssertEqual(rgba.map(\.worstCost), [5, 5, 5, 5])
        var budget = ExportBudget(timeline: timeline)
        let full = budget.evaluations
        // The default tolerance's samples: the first channel renders every one of them, the
        // second finds them all.
        _ = try ExportKeyframes.tolerance(rgba[0], timeline, &budget)
        XCTAssertEqual(instants.renders, ExportKeyframes.rangeSamples)
        XCTAssertEqual(full - budget.evaluations, 5 * ExportKeyframes.rangeSamples)
        var before = budget.evaluations
        let tolerance = try ExportKeyframes.tolerance(rgba[1], timeline, &budget)
        XCTAssertEqual(instants.renders, ExportKeyframes.rangeSamples)
        XCTAssertEqual(before - budget.evaluations, ExportKeyframes.rangeSamples)
        // A reduction: its calls, and four curves for each instant that was new.
        var calls = 2 * ExportKeyframes.rangeSamples
        for channel in rgba {
            before = budget.evaluations
            let renders = instants.renders
            let reduced = try ExportKeyframes.reduce(channel, timeline, tolerance: tolerance, cubic: false, label: "tint", budget: &budget)
            XCTAssertGreaterThan(reduced.evaluations, 1_000)
            XCTAssertEqual(before - budget.evaluations, reduced.evaluations + 4 * (instants.renders - renders))
            calls += reduced.evaluations
        }
        XCTAssertLessThan(instants.renders, calls * 3 / 4, "the channels' scans share their instants: fewer renders than calls")
        XCTAssertEqual(full - budget.evaluations, calls + 4 * instants.renders)

        // In css a colour is reduced premultiplied: red·alpha reads the colour's instant
        // once and its alpha at the same instant again, charged as one call.
        let premultiplied = CSSExport.premultiplied(rgba)
        XCTAssertEqual(premultiplied.map { $0.cost }, [1, 1, 1, 1])
        XCTAssertTrue(premultiplied.allSatisfy { $0.colour === instants })
        for t in [0, 0.3, 1.7] {
            XCTAssertEqual(premultiplied[1].value(t), rgba[1].value(t) * rgba[3].value(t))
            XCTAssertEqual(premultiplied[3].value(t), rgba[3].value(t))
        }
        // Channels of two colours (or of none) are charged both.
        let constant = ExportChannel(value: { _ in 0.5 }, hints: [], isConstant: true)
        XCTAssertEqual(CSSExport.premultiplied([rgba[0], rgba[1], rgba[2], constant]).map { $0.cost }, [2, 2, 2, 1])

        // Twenty-five staggered rgba colours in one stylesheet: refused after twelve when
        // every call was charged the whole colour (32 curves a call in css, premultiplied).
        let cards = (0..<25).map { _ in #"{"bg":"rgba(51,102,153,0.5)"}"# }.joined(separator: ",")
        let declarations = (0..<25).map { #""--bg-\#($0)":"{cards.\#($0).bg}""# }.joined(separator: ",")
        let document = #"{"fps":60,"target":{"cards":["# + cards + #"]},"motion":{"type":"tween","duration":1,"easing":"ease-in-out","stagger":{"each":0.05},"# +
            #""properties":[{"path":"cards.*.bg","to":"rgba(255,153,51,1)"}]},"output":{"format":"css","css":{"declarations":{"# + declarations + "}}}}"
        let css = text(try CSSEncoder.encode(timeline: try compile(document)))
        XCTAssertEqual(css.components(separatedBy: "@keyframes").count - 1, 25)
        XCTAssertTrue(css.contains("0% { --bg-24: rgb(51 102 153 / 0.5); }"))
        XCTAssertTrue(css.contains("100% { --bg-24: rgb(255 153 51 / 1); }"))
    }

    /// The keyframes' bytes are counted at their longest before they are written
    /// (`Declaration.keyframeBytes`): the property (and waapi's key) on every keyframe, the
    /// template's literal text escaped, each placeholder as often as the template names it.
    /// Counting 26 bytes a channel, a 500 KB document (a track with a 250,000-character path,
    /// 4,000 keyframes) wrote a 1 GB stylesheet and held 2 GB of memory.
    func testExportedKeyframesAreCountedAtTheirLongestBeforeTheyAreWritten() throws {
        let literal = String(repeating: #"a\"\t"#, count: 300)  // JSON text of quotes and tabs, which waapi escapes again
        let path = "p" + String(repeating: "x", count: 3_000)
        let documents = [
            // One custom property per track: the path is the property's name.
            #"{"fps":30,"target":{"\#(path)":0},"motion":{"type":"tween","duration":1,"easing":"steps(40)","properties":[{"path":"\#(path)","to":1}]},"output":{"format":"FORMAT"}}"#,
            // Literal text, a path named four times, a colour twice.
            ##"{"fps":30,"target":{"x":0,"tint":"#336699"},"motion":{"type":"tween","duration":1,"easing":"elastic.out","properties":[{"path":"x","to":100},{"path":"tint","to":"#ff9933"}]},"output":{"format":"FORMAT","css":{"declarations":{"--long":"\##(literal) {x} {x} {x} {x}","--tint":"{tint} {tint}","transform":"translate({x}px, 0)"}}}}"##,
        ]
        for document in documents {
            for format in ["css", "waapi"] {
                let timeline = try compile(document.replacingOccurrences(of: "FORMAT", with: format))
                let (_, declarations) = try CSSExport.plan(timeline)
                var estimate = 0
                for declaration in declarations {
                    guard let keyframes = declaration.keyframes else { continue }
                    XCTAssertGreaterThan(keyframes.times.count, 2)
                    estimate += keyframes.times.count * declaration.keyframeBytes
                }
                let written = try format == "css" ? CSSEncoder.encode(timeline: timeline) : WAAPIEncoder.encode(timeline: timeline)
                // The rest of the answer (the rule, `@property`, the options) is under 1 KB here.
                XCTAssertLessThanOrEqual(written.count, estimate + 1_024, "\(format): \(written.count) bytes written, \(estimate) counted")
                XCTAssertGreaterThan(written.count * 3, estimate, "\(format): counted far beyond what is written")
            }
        }

        // Past --max-response-bytes: a 422 before the keyframes are written.
        var limits = EngineLimits.default
        limits.maxResponseBytes = 200_000
        let long = "p" + String(repeating: "x", count: 20_000)
        let timeline = try compile(#"{"fps":60,"target":{"\#(long)":0},"motion":{"type":"tween","duration":1,"easing":"steps(20)","properties":[{"path":"\#(long)","to":1}]},"output":{"format":"css","simplify":{"tolerance":1e-9}}}"#,
                                   limits: limits)
        for format in ["css", "waapi"] {
            XCTAssertThrowsError(try format == "css" ? CSSEncoder.encode(timeline: timeline) : WAAPIEncoder.encode(timeline: timeline)) { error in
                let problem = (error as? DocumentError)?.problems.first
                XCTAssertEqual(problem?.pointer, "/output/simplify/tolerance")
                XCTAssertTrue(problem?.message.contains("more than 200000 bytes (max-response-bytes)") ?? false, problem?.message ?? "")
            }
        }
    }

    /// The smallest tolerance the document may give (5e-324) cannot be halved for a
    /// declaration's channels: the 422 says so rather than calling it not positive.
    func testAToleranceTooSmallToHalveSaysSo() throws {
        for format in ["css", "waapi", "lottie"] {
            let lottie = format == "lottie" ? #","lottie":{"width":100,"height":100,"layers":[{"name":"a","position":["{x}",0]}]}"# : ""
            let timeline = try compile(#"{"fps":60,"target":{"x":0},"motion":{"type":"tween","duration":1,"easing":"ease-in-out","properties":[{"path":"x","to":100}]},"output":{"format":"\#(format)","simplify":{"tolerance":5e-324}\#(lottie)}}"#)
            XCTAssertThrowsError(try TimelineExport.encode(timeline), format) { error in
                let problem = (error as? DocumentError)?.problems.first
                XCTAssertEqual(problem?.pointer, "/output/simplify/tolerance", format)
                XCTAssertFalse(problem?.message.contains("the tolerance 5e-324 is not a positive number") ?? true, problem?.message ?? "")
                if format != "lottie" {
                    XCTAssertTrue(problem?.message.contains("half the tolerance 5e-324, each channel's share, is not a positive number") ?? false, problem?.message ?? "")
                } else {
                    // Lottie reduces each property on its own, within the whole tolerance: the
                    // track runs into the keyframe bound instead.
                    XCTAssertTrue(problem?.message.contains("'x' needs more than 10000 keyframes to stay within 5e-324") ?? false, problem?.message ?? "")
                }
            }
        }
    }

    func testMonotonePiecesSplitAtTheTurningPoint() {
        // A Hermite segment from 0 to 0 with slopes 1 and −1 over 2 s peaks at t = 1 (value 0.5).
        let reduced = ReducedTrack(times: [0, 2], values: [0, 0], slopes: [.init(incoming: 1, outgoing: 1), .init(incoming: -1, outgoing: -1)],
                                   error: 0, evaluations: 0)
        let keys = LottieEncoder.monotonePieces(reduced)
        XCTAssertEqual(keys.count, 3)
        XCTAssertEqual(keys[1].t, 1, accuracy: 1e-12)
        XCTAssertEqual(keys[1].v, 0.5, accuracy: 1e-12)
        XCTAssertEqual(keys[1].slopeOut, 0, accuracy: 1e-12)
    }
}
