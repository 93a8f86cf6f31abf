import XCTest
@testable import MotionEngine

final class ValueTests: XCTestCase {
    // MARK: Colours

    func testColourParsing() throws {
        let cases: [(String, String)] = [
            ("#369", "#336699ff"), ("#336699", "#336699ff"), ("#33669980", "#33669980"), ("#ABCDEF", "#abcdefff"),
            ("rgb(51, 102, 153)", "#336699ff"), ("rgba(51,102,153,0.5)", "#33669980"), ("rgb(100% 0% 0% / 50%)", "#ff000080"),
            ("hsl(0, 100%, 50%)", "#ff0000ff"), ("hsl(120deg 100% 25%)", "#008000ff"), ("hsla(240, 100%, 50%, 0.25)", "#0000ff40"),
        ]
        for (text, hex) in cases {
            XCTAssertEqual(Colour(css: text)?.hexString, hex, text)
        }
        for bad in ["#12", "#12345", "red", "rgb(1,2)", "hsl(0, 1, 0.5)", "rgb(a,b,c)", "#gggggg", ""] {
            XCTAssertNil(Colour(css: bad), bad)
        }
    }

    func testHexRoundsHalvesUp() {
        // 0.5·255 = 127.5 → 128 (0x80).
        XCTAssertEqual(Colour(red: 0.5, green: 0, blue: 1, alpha: 1).hexString, "#8000ffff")
        XCTAssertEqual(Colour(red: 1.2, green: -0.1, blue: 0, alpha: 1).hexString, "#ff0000ff", "channels clamp to 0…1")
    }

    func testHSBRoundTrip() {
        let colour = Colour(css: "#336699")!
        let hsb = colour.hsb
        XCTAssertEqual(hsb.hue, 210, accuracy: 1e-9)
        XCTAssertEqual(hsb.saturation, 2.0 / 3, accuracy: 1e-9)
        XCTAssertEqual(hsb.brightness, 0.6, accuracy: 1e-9)
        XCTAssertEqual(Colour(hue: hsb.hue, saturation: hsb.saturation, brightness: hsb.brightness).hexString, "#336699ff")
    }

    func testWholeColourTweenHasTracksForChangingChannelsInUnitRange() throws {
        let timeline = try compile(##"""
        {"fps":2,"output":{"layout":"frames"},"target":{"tint":"#ff0000"},
         "motion":{"type":"tween","duration":1,"properties":[{"path":"tint","to":"#0000ff"}]}}
        """##)
        XCTAssertEqual(timeline.tracks.map(\.path), ["tint.red", "tint.blue"])
        XCTAssertEqual(timeline.values(of: "tint.red"), [1, 0.5, 0])
        XCTAssertEqual(timeline.values(of: "tint.blue"), [0, 0.5, 1])
        let body = try parseJSON(TimelineEncoder.encode(timeline)).objectValue!
        let frames = body["frames"]!.arrayValue!
        XCTAssertEqual(frames[1].objectValue?["values"]?.objectValue?["tint"], .string("#800080ff"))
        XCTAssertEqual(body["final"]?.objectValue?["tint"], .string("#0000ffff"))
    }

    /// A colour output renders from its tracks by component index (`ColourRecipe`), as the
    /// component names say: RGB channels, then hue, saturation and brightness from the colour
    /// so far, then alpha; a component no track drives keeps the base colour's.
    func testColourOutputsRenderTheirComponentsInOrder() {
        let base = Colour(red: 0.2, green: 0.4, blue: 0.6, alpha: 0.8)
        let values: [Double] = [0.9, 0.1, 0.35, 123, 0.5, 0.7, 0.25]
        func reference(_ channels: [(component: String, track: Int)]) -> Colour {
            var colour = base
            for (name, track) in channels where ["red", "green", "blue"].contains(name) { colour[name] = values[track] }
            let hsbNames = channels.filter { ["hue", "saturation", "brightness"].contains($0.component) }
            if !hsbNames.isEmpty {
                var hsb = colour.hsb
                for (name, track) in hsbNames {
                    if name == "hue" { hsb.hue = values[track] } else if name == "saturation" { hsb.saturation = values[track] } else { hsb.brightness = values[track] }
                }
                colour = Colour(hue: hsb.hue, saturation: hsb.saturation, brightness: hsb.brightness, alpha: colour.alpha)
            }
            if let alpha = channels.last(where: { $0.component == "alpha" }) { colour.alpha = values[alpha.track] }
            return colour
        }
        let names = Colour.components
        // Every subset of the seven components, each driven by a track in a shuffled order.
        for mask in 0..<(1 << names.count) {
            var channels = names.indices.filter { mask & (1 << $0) != 0 }.map { (component: names[$0], track: ($0 * 3) % names.count) }
            channels.reverse()
            let output = Timeline.PropertyOutput(path: PropertyPath("tint")!, kind: .colour(base: base, channels: channels))
            let rendered = output.colour { values[$0] }
            XCTAssertEqual(rendered, reference(channels), "\(channels.map(\.component))")
        }
        XCTAssertEqual(Timeline.PropertyOutput(path: PropertyPath("tint")!, kind: .colour(base: base, channels: [])).colour { _ in 0 }, base)
        XCTAssertNil(Timeline.PropertyOutput(path: PropertyPath("x")!, kind: .value(template: .number(1), leaves: [])).colour { _ in 0 })
    }

    func testAlphaOnlyChangeKeepsRGB() throws {
        let timeline = try compile(##"{"fps":1,"target":{"tint":"#336699"},"motion":{"type":"tween","duration":1,"properties":[{"path":"tint","to":"#33669900"}]}}"##)
        XCTAssertEqual(timeline.tracks.map(\.path), ["tint.alpha"])
        XCTAssertEqual(timeline.document(at: 1)["tint"], .string("#33669900"))
        let component = try compile(##"{"fps":2,"target":{"tint":"#336699"},"motion":{"type":"tween","duration":1,"properties":[{"path":"tint.alpha","to":0}]}}"##)
        XCTAssertEqual(component.values(of: "tint.alpha"), [1, 0.5, 0])
        XCTAssertEqual(component.document(at: 0.5)["tint"], .string("#33669980"))
    }

    func testHueTakesTheShortWayRound() throws {
        // 350° → 10° goes up through 360, not down through 180.
        let timeline = try compile(##"{"fps":4,"target":{"tint":"hsl(350, 100%, 50%)"},"motion":{"type":"tween","duration":1,"properties":[{"path":"tint.hue","to":10}]}}"##)
        let hues = timeline.values(of: "tint.hue")
        for (value, expected) in zip(hues, [350.0, 355, 0, 5, 10]) { XCTAssertEqual(value, expected, accuracy: 1e-9) }
        XCTAssertEqual(timeline.document(at: 0.5)["tint"], .string("#ff0000ff"))
    }

    func testSaturationAndBrightnessAnimateInHSB() throws {
        let timeline = try compile(##"{"fps":2,"target":{"tint":"#ff0000"},"motion":{"type":"tween","duration":1,"properties":[{"path":"tint.saturation","to":0}]}}"##)
        XCTAssertEqual(timeline.values(of: "tint.saturation"), [1, 0.5, 0])
        XCTAssertEqual(timeline.document(at: 0.5)["tint"], .string("#ff8080ff"))
        XCTAssertEqual(timeline.document(at: 1)["tint"], .string("#ffffffff"))
        let error = problems(##"{"target":{"tint":"#ff0000"},"motion":{"type":"tween","duration":1,"properties":[{"path":"tint.brightness","to":2}]}}"##)
        XCTAssertEqual(error.problems.first?.pointer, "/motion/properties/0/to")
    }

    func testBadColourIsQuoted() {
        let error = problems(##"{"target":{"tint":"#ff0000"},"motion":{"type":"tween","duration":1,"properties":[{"path":"tint","to":"bluish"}]}}"##)
        XCTAssertEqual(error.status, 422)
        XCTAssertEqual(error.problems.first?.pointer, "/motion/properties/0/to")
        XCTAssertTrue(error.problems.first?.message.contains("'bluish'") ?? false)
    }

    func testUntouchedColoursKeepTheirFormInFinal() throws {
        let timeline = try compile(##"{"fps":1,"target":{"tint":"rgb(1, 2, 3)","x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1}]}}"##)
        XCTAssertEqual(timeline.document(at: 1)["tint"], .string("rgb(1, 2, 3)"))
    }

    // MARK: Composite shapes

    func testCommonCompositeShapes() throws {
        let timeline = try compile(##"""
        {"fps":1,"output":{"layout":"frames"},
         "target":{"transform":{"a":1,"b":0,"c":0,"d":1,"tx":0,"ty":0},"insets":{"top":0,"left":0,"bottom":0,"right":0},
                   "m":[1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]},
         "motion":{"type":"tween","duration":1,"properties":[
           {"path":"transform","to":{"a":2,"b":0,"c":0,"d":2,"tx":10,"ty":0}},
           {"path":"insets","to":{"top":8,"left":8,"bottom":8,"right":8}},
           {"path":"m","to":[2,0,0,0, 0,2,0,0, 0,0,1,0, 5,6,0,1]}]}}
        """##)
        XCTAssertEqual(timeline.tracks.map(\.path), ["transform.a", "transform.d", "transform.tx", "insets.top", "insets.left",
                                                     "insets.bottom", "insets.right", "m.0", "m.5", "m.12", "m.13"])
        let final = timeline.document(at: 1)
        XCTAssertEqual(final["m"], .array([2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 5, 6, 0, 1].map { JSON.number($0) }))
        XCTAssertEqual(final["transform"]?.objectValue?.keys, ["a", "b", "c", "d", "tx", "ty"])
    }

    func testVectorOfSixtyFourLanes() throws {
        let from = (0..<64).map { String($0) }.joined(separator: ",")
        let to = (0..<64).map { String($0 * 2) }.joined(separator: ",")
        let timeline = try compile(##"{"fps":1,"motion":{"type":"tween","duration":1,"properties":[{"path":"v","from":[\##(from)],"to":[\##(to)]}]}}"##)
        XCTAssertEqual(timeline.tracks.count, 63, "lane 0 does not change")
        XCTAssertEqual(timeline.values(of: "v.63"), [63, 126])
    }

    func testMixedShapesNameThePath() {
        let error = problems(##"{"target":{"frame":{"x":0}},"motion":{"type":"tween","duration":1,"properties":[{"path":"frame","to":[1,2]}]}}"##)
        XCTAssertEqual(error.status, 422)
        XCTAssertTrue(error.problems.first?.message.contains("frame") ?? false, "\(error.problems)")
        let colourVsNumber = problems(##"{"motion":{"type":"tween","duration":1,"properties":[{"path":"c","from":1,"to":"#fff"}]}}"##)
        XCTAssertEqual(colourVsNumber.problems.first?.pointer, "/motion/properties/0/from")
    }

    // MARK: Additive

    func testAdditiveReferenceEndsAtOneHundred() throws {
        // docs/timing-and-events.md: additive motions to 20 and then to 100 (weights 1) end at 100.
        let timeline = try compile(##"""
        {"fps":2,"target":{"x":0},"motion":{"type":"sequence","steps":[
          {"type":"tween","duration":1,"additive":true,"properties":[{"path":"x","to":20}]},
          {"type":"tween","duration":1,"additive":true,"properties":[{"path":"x","to":100}]}]}}
        """##)
        XCTAssertEqual(timeline.values(of: "x"), [0, 10, 20, 60, 100])
    }

    func testWeightedAdditiveReferenceEndsAtForty() throws {
        let timeline = try compile(##"""
        {"fps":1,"target":{"x":0},"motion":{"type":"sequence","steps":[
          {"type":"tween","duration":1,"additive":true,"properties":[{"path":"x","to":0}]},
          {"type":"tween","duration":1,"additive":true,"additiveWeight":0.5,"properties":[{"path":"x","to":80}]}]}}
        """##)
        XCTAssertEqual(timeline.values(of: "x").last, 40)
    }

    func testOverlappingAdditiveMotionsSumTheirDeltas() throws {
        // Started at different times on top of a non-additive base motion.
        let timeline = try compile(##"""
        {"fps":2,"target":{"x":0},"motion":{"type":"group","children":[
          {"type":"tween","duration":2,"properties":[{"path":"x","to":100}]},
          {"type":"tween","duration":1,"additive":true,"properties":[{"path":"x","from":0,"to":10}]},
          {"type":"tween","delay":0.5,"duration":1,"additive":true,"additiveWeight":0.5,"properties":[{"path":"x","from":0,"to":40}]}]}}
        """##)
        // Second additive rebases onto the first's weighted end: from 10, to 40, w 0.5.
        // t=0.5: 25 + 5 + 0 = 30; t=1: 50 + 10 + 0.5·(25−10) = 67.5; t=1.5: 75 + 10 + 0.5·(40−10) = 100.
        XCTAssertEqual(timeline.values(of: "x"), [0, 30, 67.5, 100, 125])
    }

    func testAdditiveWeightNeedsAdditive() {
        let error = problems(##"{"target":{"x":0},"motion":{"type":"tween","duration":1,"additiveWeight":0.5,"properties":[{"path":"x","to":1}]}}"##)
        XCTAssertEqual(error.problems.first?.pointer, "/motion/additiveWeight")
    }

    // MARK: Bounds

    func testRubberbandReference() {
        let bounds = Bounds(min: 0, max: 100, mode: .rubberband)
        XCTAssertEqual(bounds.apply(110), 105.2133, accuracy: 1e-4)
        XCTAssertEqual(bounds.apply(-10), -5.2133, accuracy: 1e-4)
        XCTAssertEqual(bounds.apply(50), 50)
    }

    func testBoundsOnAProperty() throws {
        let timeline = try compile(##"""
        {"fps":2,"target":{"x":0,"y":0},"motion":{"type":"tween","duration":1,"properties":[
          {"path":"x","to":120,"bounds":{"min":0,"max":100,"mode":"clamp"}},
          {"path":"y","to":120,"bounds":{"min":0,"max":100,"mode":"rubberband","coefficient":0.55,"dimension":100}}]}}
        """##)
        XCTAssertEqual(timeline.values(of: "x"), [0, 60, 100])
        let stretched: Double = 100 + 100 * (1 - 1 / (20 * 0.55 / 100 + 1))
        XCTAssertEqual(timeline.values(of: "y")[2], stretched, accuracy: 1e-12)
    }

    func testBoundsValidation() {
        let error = problems(##"{"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1,"bounds":{"min":5,"max":1,"mode":"stretch"}}]}}"##)
        XCTAssertEqual(Set(error.problems.map(\.pointer)), ["/motion/properties/0/bounds/mode"])
        let order = problems(##"{"target":{"x":0},"motion":{"type":"tween","duration":1,"properties":[{"path":"x","to":1,"bounds":{"min":5,"max":1,"mode":"clamp"}}]}}"##)
        XCTAssertEqual(order.problems.first?.pointer, "/motion/properties/0/bounds/max")
    }
}
