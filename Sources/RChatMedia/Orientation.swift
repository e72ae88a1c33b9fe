/// EXIF orientation: how a camera's stored pixels are turned for display (phones store
/// portrait photos sideways and say 6). Raw values are the EXIF ones.
enum Orientation: Int, Sendable {
    case upright = 1, mirrored, upsideDown, upsideDownMirrored, transposed, turnedRight, transverse, turnedLeft

    /// Turned a quarter: the displayed picture is as wide as the stored one is tall.
    var swapsSides: Bool { rawValue >= 5 }

    /// The displayed size of a stored `width × height`.
    func displayed(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsSides ? (height, width) : (width, height)
    }

    /// The stored pixel shown at displayed (x, y), for a stored `width × height`.
    func source(x: Int, y: Int, width: Int, height: Int) -> (x: Int, y: Int) {
        switch self {
        case .upright: return (x, y)
        case .mirrored: return (width - 1 - x, y)
        case .upsideDown: return (width - 1 - x, height - 1 - y)
        case .upsideDownMirrored: return (x, height - 1 - y)
        case .transposed: return (y, x)
        case .turnedRight: return (y, height - 1 - x)
        case .transverse: return (width - 1 - y, height - 1 - x)
        case .turnedLeft: return (width - 1 - y, x)
        }
    }

    /// Stored RGBA pixels turned for display.
    func apply(_ rgba: [UInt8], width: Int, height: Int) -> [UInt8] {
        guard self != .upright else { return rgba }
        let shown = displayed(width: width, height: height)
        return rgba.withUnsafeBytes { stored in
            [UInt8](unsafeUninitializedCapacity: rgba.count) { out, count in
                let pixels = UnsafeMutableRawBufferPointer(out)
                for y in 0..<shown.height {
                    for x in 0..<shown.width {
                        let from = source(x: x, y: y, width: width, height: height)
                        let pixel = stored.loadUnaligned(fromByteOffset: (from.y * width + from.x) * 4, as: UInt32.self)
                        pixels.storeBytes(of: pixel, toByteOffset: (y * shown.width + x) * 4, as: UInt32.self)
                    }
                }
                count = rgba.count
            }
        }
    }
}
