import Foundation

/// An sRGB colour with alpha, every channel in 0…1 (docs/values.md#colours).
public struct Colour: Sendable, Equatable {
    public var red: Double
    public var green: Double
    public var blue: Double
    public var alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// The channels that become tracks of a whole-colour property, in track order.
    public static let channels = ["red", "green", "blue", "alpha"]
    /// Components a path may name directly; hue, saturation and brightness animate in HSB.
    public static let components = ["red", "green", "blue", "alpha", "hue", "saturation", "brightness"]

    /// A component a path may name, without its name: the hot paths (an export evaluates a
    /// colour's component hundreds of thousands of times) switch on this, not on a string.
    enum Component: Int, CaseIterable {
        case red, green, blue, alpha, hue, saturation, brightness

        /// The component `name` (one of `Colour.components`), or nil.
        init?(_ name: String) {
            guard let index = Colour.components.firstIndex(of: name) else { return nil }
            self.init(rawValue: index)
        }

        func value(of colour: Colour) -> Double {
            switch self {
            case .red: return colour.red
            case .green: return colour.green
            case .blue: return colour.blue
            case .alpha: return colour.alpha
            case .hue: return colour.hsb.hue
            case .saturation: return colour.hsb.saturation
            case .brightness: return colour.hsb.brightness
            }
        }
    }

    public subscript(channel: String) -> Double {
        get { Component(channel)?.value(of: self) ?? 0 }
        set {
            switch channel {
            case "red": red = newValue
            case "green": green = newValue
            case "blue": blue = newValue
            case "alpha": alpha = newValue
            default:
                var value = hsb
                switch channel {
                case "hue": value.hue = newValue
                case "saturation": value.saturation = newValue
                case "brightness": value.brightness = newValue
                default: return
                }
                self = Colour(hue: value.hue, saturation: value.saturation, brightness: value.brightness, alpha: alpha)
            }
        }
    }

    // MARK: HSB

    /// Hue in degrees [0, 360), saturation and brightness in 0…1.
    public var hsb: (hue: Double, saturation: Double, brightness: Double) {
        let r = clamp01(red), g = clamp01(green), b = clamp01(blue)
        let maximum = max(r, g, b), minimum = min(r, g, b)
        let delta = maximum - minimum
        var hue = 0.0
        if delta > 0 {
            if maximum == r {
                hue = 60 * ((g - b) / delta).truncatingRemainder(dividingBy: 6)
            } else if maximum == g {
                hue = 60 * ((b - r) / delta + 2)
            } else {
                hue = 60 * ((r - g) / delta + 4)
            }
        }
        return (Self.normalisedHue(hue), maximum == 0 ? 0 : delta / maximum, maximum)
    }

    public init(hue: Double, saturation: Double, brightness: Double, alpha: Double = 1) {
        let h = Self.normalisedHue(hue) / 60
        let s = clamp01(saturation), v = clamp01(brightness)
        let c = v * s
        let x = c * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
        let m = v - c
        let (r, g, b): (Double, Double, Double)
        switch h {
        case ..<1: (r, g, b) = (c, x, 0)
        case ..<2: (r, g, b) = (x, c, 0)
        case ..<3: (r, g, b) = (0, c, x)
        case ..<4: (r, g, b) = (0, x, c)
        case ..<5: (r, g, b) = (x, 0, c)
        default: (r, g, b) = (c, 0, x)
        }
        self.init(red: r + m, green: g + m, blue: b + m, alpha: alpha)
    }

    /// A hue in degrees wrapped into [0, 360).
    public static func normalisedHue(_ hue: Double) -> Double {
        let wrapped = hue.truncatingRemainder(dividingBy: 360)
        let result = wrapped < 0 ? wrapped + 360 : wrapped
        return result >= 360 ? 0 : result
    }

    // MARK: Text

    /// `#rrggbbaa` in lower case, each channel `round(255·c)` with halves rounded up.
    public var hexString: String {
        let digits = Array("0123456789abcdef")
        var text = "#"
        for channel in [red, green, blue, alpha] {
            let byte = Int((clamp01(channel) * 255 + 0.5).rounded(.down))
            text.append(digits[byte >> 4])
            text.append(digits[byte & 0xF])
        }
        return text
    }

    /// Parses `#rgb`, `#rrggbb`, `#rrggbbaa`, `rgb()`, `rgba()`, `hsl()`, `hsla()`
    /// (comma or space separated, CSS Color 4 `/ alpha` accepted); nil for anything else.
    public init?(css text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.hasPrefix("#") {
            let hex = Array(trimmed.dropFirst())
            guard [3, 6, 8].contains(hex.count), hex.allSatisfy(\.isHexDigit) else { return nil }
            func byte(_ index: Int, _ width: Int) -> Double {
                let digits = String(hex[index..<index + width])
                let value = Double(Int(digits, radix: 16) ?? 0)
                return width == 1 ? value * 17 / 255 : value / 255
            }
            if hex.count == 3 {
                self.init(red: byte(0, 1), green: byte(1, 1), blue: byte(2, 1))
            } else {
                self.init(red: byte(0, 2), green: byte(2, 2), blue: byte(4, 2), alpha: hex.count == 8 ? byte(6, 2) : 1)
            }
            return
        }
        guard let open = trimmed.firstIndex(of: "("), trimmed.hasSuffix(")") else { return nil }
        let name = String(trimmed[..<open]).trimmingCharacters(in: .whitespaces)
        let inner = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
        var arguments = inner.replacingOccurrences(of: "/", with: " / ")
            .split(whereSeparator: { $0 == "," || $0 == " " }).map(String.init)
        var alphaText: String?
        if let slash = arguments.firstIndex(of: "/") {
            guard slash == 3, arguments.count == 5 else { return nil }
            alphaText = arguments[4]
            arguments = Array(arguments[0..<3])
        } else if arguments.count == 4 {
            alphaText = arguments[3]
            arguments = Array(arguments[0..<3])
        }
        guard arguments.count == 3 else { return nil }
        var alpha = 1.0
        if let alphaText {
            guard let value = Self.number(alphaText, percentScale: 1) else { return nil }
            alpha = value
        }
        switch name {
        case "rgb", "rgba":
            guard let r = Self.number(arguments[0], percentScale: 255), let g = Self.number(arguments[1], percentScale: 255),
                  let b = Self.number(arguments[2], percentScale: 255) else { return nil }
            self.init(red: clamp01(r / 255), green: clamp01(g / 255), blue: clamp01(b / 255), alpha: clamp01(alpha))
        case "hsl", "hsla":
            guard let h = Self.number(arguments[0].replacingOccurrences(of: "deg", with: ""), percentScale: nil),
                  arguments[1].hasSuffix("%"), arguments[2].hasSuffix("%"),
                  let s = Self.number(arguments[1], percentScale: 1), let l = Self.number(arguments[2], percentScale: 1) else { return nil }
            let saturation = clamp01(s), lightness = clamp01(l)
            // HSL → HSB.
            let brightness = lightness + saturation * min(lightness, 1 - lightness)
            let hsbSaturation = brightness == 0 ? 0 : 2 * (1 - lightness / brightness)
            self.init(hue: h, saturation: hsbSaturation, brightness: brightness, alpha: clamp01(alpha))
        default:
            return nil
        }
    }

    /// A CSS number, or a percentage scaled so that 100% = `percentScale`.
    private static func number(_ text: String, percentScale: Double?) -> Double? {
        if text.hasSuffix("%") {
            guard let percentScale, let value = Double(text.dropLast()), value.isFinite else { return nil }
            return value / 100 * percentScale
        }
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }
}

@inline(__always)
func clamp01(_ value: Double) -> Double { min(1, max(0, value)) }
