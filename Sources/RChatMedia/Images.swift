import CJPEG
import CPNG
import Glibc

public enum ImageFormat: Sendable { case jpeg, png }

/// A whole picture as 8-bit RGBA, rows top to bottom, `width × 4` bytes each.
public struct DecodedImage: Sendable {
    public let width: Int
    public let height: Int
    public let rgba: [UInt8]

    public init(width: Int, height: Int, rgba: [UInt8]) {
        precondition(width > 0 && height > 0 && rgba.count == width * height * 4, "RGBA size does not match \(width)×\(height)")
        self.width = width
        self.height = height
        self.rgba = rgba
    }
}

/// Pictures through libjpeg-turbo and libpng. Every entry reads the header first and refuses
/// a header that claims more than the pixel limit before anything is allocated for the
/// pixels; damaged data is an error from the library, never a crash.
public enum Images {
    /// 40 megapixels: any phone's photo, 160 MB decoded.
    public static let maximumPixels = 40_000_000

    /// PNG's 8-byte signature.
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// JPEG's start-of-image marker followed by the first marker's 0xFF.
    static let jpegSignature: [UInt8] = [0xFF, 0xD8, 0xFF]

    /// By magic bytes only; nil for anything else.
    public static func format(ofFileAt path: String) -> ImageFormat? {
        guard let head = try? FileBytes.prefix(of: path, count: 8) else { return nil }
        if head.starts(with: pngSignature) { return .png }
        if head.starts(with: jpegSignature) { return .jpeg }
        return nil
    }

    /// Reads the header only: format and size (as displayed: a JPEG's EXIF orientation turned
    /// to). A header claiming more than `maximumPixels` is an error (a decompression bomb)
    /// before anything is allocated.
    public static func probe(path: String) throws(MediaError) -> (format: ImageFormat, width: Int, height: Int) {
        let (format, reader) = try open(path, maximumPixels: maximumPixels)
        defer { reader.close() }
        let shown = reader.orientation.displayed(width: reader.width, height: reader.height)
        return (format, shown.width, shown.height)
    }

    /// Whole image as RGBA 8-bit, via libjpeg-turbo / libpng, turned upright per a JPEG's EXIF
    /// orientation; truncated or corrupt data is an error, never a crash.
    public static func decode(path: String, maximumPixels: Int = maximumPixels) throws(MediaError) -> DecodedImage {
        let (_, reader) = try open(path, maximumPixels: maximumPixels)
        defer { reader.close() }
        let (width, height, orientation) = (reader.width, reader.height, reader.orientation)
        let shown = orientation.displayed(width: width, height: height)
        return DecodedImage(width: shown.width, height: shown.height,
                            rgba: orientation.apply(try reader.readRGBA(), width: width, height: height))
    }

    /// The decoder for the file's format with the header read and its size within the limit.
    private static func open(_ path: String, maximumPixels: Int) throws(MediaError) -> (ImageFormat, any PictureReader) {
        let format = try openedFormat(path)
        let reader: any PictureReader
        switch format {
        case .jpeg: reader = try JPEGReader(path: path)
        case .png: reader = try PNGReader(path: path)
        }
        do throws(MediaError) {
            try checkSize(reader.width, reader.height, limit: maximumPixels)
        } catch {
            reader.close()
            throw error
        }
        return (format, reader)
    }

    /// The format by magic bytes, telling an unreadable file from one that is not a picture.
    private static func openedFormat(_ path: String) throws(MediaError) -> ImageFormat {
        _ = try FileBytes.prefix(of: path, count: 0)   // a missing or unreadable file says so
        guard let format = format(ofFileAt: path) else { throw MediaError(.notAnImage(path: path)) }
        return format
    }

    private static func checkSize(_ width: Int, _ height: Int, limit: Int) throws(MediaError) {
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard width > 0, height > 0, !overflow, pixels <= limit else {
            throw MediaError(.tooLarge(width: width, height: height, limit: limit))
        }
    }
}

/// A decoder that has read a picture's header: its size, then its pixels once, then `close`
/// (which may come twice).
private protocol PictureReader: AnyObject {
    /// As stored, before `orientation` turns it.
    var width: Int { get }
    var height: Int { get }
    var orientation: Orientation { get }
    func readRGBA() throws(MediaError) -> [UInt8]
    func close()
}

/// One JPEG decode through the C shim, which keeps libjpeg's longjmp on the C side.
private final class JPEGReader: PictureReader {
    private let path: String
    private var reader: OpaquePointer?

    init(path: String) throws(MediaError) {
        self.path = path
        var errorNumber: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        reader = rchat_jpeg_open(path, &errorNumber, &message, message.count)
        guard reader != nil else {
            if errorNumber != 0 { throw MediaError(.file(action: "open", path: path, errno: errorNumber)) }
            throw MediaError(.damagedImage(format: .jpeg, path: path, cause: MediaError.text(message)))
        }
    }

    var width: Int { Int(rchat_jpeg_width(reader)) }
    var height: Int { Int(rchat_jpeg_height(reader)) }
    var orientation: Orientation { Orientation(rawValue: Int(rchat_jpeg_orientation(reader))) ?? .upright }

    func readRGBA() throws(MediaError) -> [UInt8] {
        var message = [CChar](repeating: 0, count: 256)
        var failed = false
        let rgba = [UInt8](unsafeUninitializedCapacity: width * height * 4) { buffer, count in
            // Every byte is written when the decode succeeds; when it fails none is kept, so a
            // damaged file claiming many pixels costs only the pages the decoder reached.
            failed = rchat_jpeg_read_rgba(reader, buffer.baseAddress, &message, message.count) != 0
            count = failed ? 0 : buffer.count
        }
        if failed {
            throw MediaError(.damagedImage(format: .jpeg, path: path, cause: MediaError.text(message)))
        }
        return rgba
    }

    func close() {
        rchat_jpeg_close(reader)
        reader = nil
    }

    deinit { close() }
}

/// libpng's simplified API: `init` reads up to the first image data, `readRGBA` decodes.
/// libpng keeps the address of the `png_image` it was given (its error handler finds the jump
/// buffer through it), so the struct lives at one heap address from the first call to the last.
private final class PNGReader: PictureReader {
    private let path: String
    private let image: UnsafeMutablePointer<png_image>

    init(path: String) throws(MediaError) {
        self.path = path
        image = .allocate(capacity: 1)
        image.initialize(to: png_image())
        image.pointee.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_file(image, path) != 0 else {
            let cause = Self.message(of: image.pointee)
            close()
            throw MediaError(.damagedImage(format: .png, path: path, cause: cause))
        }
    }

    var width: Int { Int(image.pointee.width) }
    var height: Int { Int(image.pointee.height) }
    /// PNG's rare eXIf chunk is not read: PNGs are shown as stored.
    var orientation: Orientation { .upright }

    func readRGBA() throws(MediaError) -> [UInt8] {
        image.pointee.format = rchat_png_format_rgba()
        let stride = width * 4
        var ok = false
        let rgba = [UInt8](unsafeUninitializedCapacity: stride * height) { buffer, count in
            // As for JPEG: all written on success, none kept on failure.
            ok = png_image_finish_read(image, nil, buffer.baseAddress, Int32(stride), nil) != 0
            count = ok ? buffer.count : 0
        }
        guard ok else { throw MediaError(.damagedImage(format: .png, path: path, cause: Self.message(of: image.pointee))) }
        return rgba
    }

    /// Releases libpng's state (`png_image_free` does nothing when there is none, so twice is fine).
    func close() { png_image_free(image) }

    deinit {
        png_image_free(image)
        image.deinitialize(count: 1)
        image.deallocate()
    }

    static func message(of image: png_image) -> String {
        withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
