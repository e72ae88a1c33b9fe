#include "CJPEG.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jpeglib.h>

/* libjpeg's error manager followed by where to jump and the message to keep. */
typedef struct {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} rchat_jpeg_error;

struct rchat_jpeg_reader {
    struct jpeg_decompress_struct info;
    rchat_jpeg_error error;
    struct jpeg_progress_mgr progress;
    FILE *file;
    int orientation;
};

/*
 * A progressive JPEG may hold thousands of tiny scans, each a pass over every coefficient: a
 * small file that takes minutes. More than this is refused while decoding (as djpeg's
 * -maxscans does); a camera's progressive JPEG has about ten.
 */
#define RCHAT_JPEG_MAX_SCANS 500

static void rchat_jpeg_progress(j_common_ptr info) {
    const int scan = ((j_decompress_ptr)info)->input_scan_number;
    if (scan > RCHAT_JPEG_MAX_SCANS) {
        rchat_jpeg_error *error = (rchat_jpeg_error *)info->err;
        snprintf(error->message, sizeof error->message, "more than %d progressive scans", RCHAT_JPEG_MAX_SCANS);
        longjmp(error->jump, 1);
    }
}

#define RCHAT_EXIF_MARKER (JPEG_APP0 + 1)

/*
 * The Orientation tag (0x0112, one SHORT) of IFD0 in an APP1 "Exif\0\0" segment: a TIFF
 * header ("II" little-endian or "MM" big-endian, 42, the offset of IFD0), then IFD0's entry
 * count and 12-byte entries (tag, type, count, value). 1 (as stored) when absent or invalid.
 */
static int rchat_exif_orientation(const unsigned char *data, size_t length) {
    if (length < 6 + 8 || memcmp(data, "Exif\0\0", 6) != 0) return 1;
    const unsigned char *tiff = data + 6;
    const size_t size = length - 6;
    int little;
    if (tiff[0] == 'I' && tiff[1] == 'I') little = 1;
    else if (tiff[0] == 'M' && tiff[1] == 'M') little = 0;
    else return 1;
#define RCHAT_U16(p) (little ? (unsigned)(p)[0] | (unsigned)(p)[1] << 8 : (unsigned)(p)[0] << 8 | (unsigned)(p)[1])
#define RCHAT_U32(p) (little ? (size_t)RCHAT_U16(p) | (size_t)RCHAT_U16((p) + 2) << 16 : (size_t)RCHAT_U16(p) << 16 | (size_t)RCHAT_U16((p) + 2))
    if (RCHAT_U16(tiff + 2) != 42) return 1;
    const size_t ifd = RCHAT_U32(tiff + 4);
    if (ifd > size || size - ifd < 2) return 1;
    const size_t entries = RCHAT_U16(tiff + ifd);
    for (size_t i = 0; i < entries; i++) {
        const size_t at = ifd + 2 + 12 * i;
        if (at > size || size - at < 12) break;
        if (RCHAT_U16(tiff + at) == 0x0112 && RCHAT_U16(tiff + at + 2) == 3) {
            const unsigned value = RCHAT_U16(tiff + at + 8);
            return value >= 1 && value <= 8 ? (int)value : 1;
        }
    }
#undef RCHAT_U16
#undef RCHAT_U32
    return 1;
}

static void rchat_jpeg_error_exit(j_common_ptr info) {
    rchat_jpeg_error *error = (rchat_jpeg_error *)info->err;
    error->manager.format_message(info, error->message);
    longjmp(error->jump, 1);
}

/* Level -1 is a warning about damaged data: treated as the error it is. Trace levels pass. */
static void rchat_jpeg_emit_message(j_common_ptr info, int level) {
    if (level < 0) rchat_jpeg_error_exit(info);
}

static void rchat_jpeg_copy_message(const char *from, char *message, size_t message_size) {
    if (message_size == 0) return;
    snprintf(message, message_size, "%s", from);
}

static void rchat_jpeg_install(rchat_jpeg_error *error, struct jpeg_error_mgr **target) {
    *target = jpeg_std_error(&error->manager);
    error->manager.error_exit = rchat_jpeg_error_exit;
    error->manager.emit_message = rchat_jpeg_emit_message;
    error->message[0] = 0;
}

rchat_jpeg_reader *rchat_jpeg_open(const char *path, int *error_number, char *message, size_t message_size) {
    *error_number = 0;
    rchat_jpeg_reader *reader = calloc(1, sizeof *reader);
    if (!reader) {
        *error_number = ENOMEM;
        rchat_jpeg_copy_message("out of memory", message, message_size);
        return NULL;
    }
    reader->file = fopen(path, "rb");
    if (!reader->file) {
        *error_number = errno;
        rchat_jpeg_copy_message(strerror(errno), message, message_size);
        free(reader);
        return NULL;
    }
    rchat_jpeg_install(&reader->error, &reader->info.err);
    if (setjmp(reader->error.jump)) {
        rchat_jpeg_copy_message(reader->error.message, message, message_size);
        rchat_jpeg_close(reader);
        return NULL;
    }
    jpeg_create_decompress(&reader->info);
    reader->progress.progress_monitor = rchat_jpeg_progress;
    reader->info.progress = &reader->progress;
    jpeg_stdio_src(&reader->info, reader->file);
    jpeg_save_markers(&reader->info, RCHAT_EXIF_MARKER, 0xFFFF);
    jpeg_read_header(&reader->info, TRUE);
    reader->orientation = 1;
    for (jpeg_saved_marker_ptr marker = reader->info.marker_list; marker; marker = marker->next) {
        if (marker->marker == RCHAT_EXIF_MARKER) {
            reader->orientation = rchat_exif_orientation(marker->data, marker->data_length);
            break;
        }
    }
    return reader;
}

int rchat_jpeg_width(const rchat_jpeg_reader *reader) { return (int)reader->info.image_width; }
int rchat_jpeg_height(const rchat_jpeg_reader *reader) { return (int)reader->info.image_height; }
int rchat_jpeg_orientation(const rchat_jpeg_reader *reader) { return reader->orientation; }

int rchat_jpeg_read_rgba(rchat_jpeg_reader *reader, unsigned char *rgba, char *message, size_t message_size) {
    if (setjmp(reader->error.jump)) {
        rchat_jpeg_copy_message(reader->error.message, message, message_size);
        return -1;
    }
    reader->info.out_color_space = JCS_EXT_RGBA;
    jpeg_start_decompress(&reader->info);
    const size_t stride = (size_t)reader->info.output_width * 4;
    while (reader->info.output_scanline < reader->info.output_height) {
        JSAMPROW row = rgba + (size_t)reader->info.output_scanline * stride;
        jpeg_read_scanlines(&reader->info, &row, 1);
    }
    jpeg_finish_decompress(&reader->info);
    return 0;
}

void rchat_jpeg_close(rchat_jpeg_reader *reader) {
    if (!reader) return;
    /* A failure inside destroy would jump to a frame that is gone: it cannot fail, but be sure. */
    if (setjmp(reader->error.jump) == 0) jpeg_destroy_decompress(&reader->info);
    if (reader->file) fclose(reader->file);
    free(reader);
}

int rchat_jpeg_write_rgb(const char *path, const unsigned char *rgb, int width, int height, int quality,
                         int orientation, int scans_per_band, char *message, size_t message_size) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        rchat_jpeg_copy_message(strerror(errno), message, message_size);
        return -1;
    }
    FILE *file = fdopen(fd, "wb");
    if (!file) {
        rchat_jpeg_copy_message(strerror(errno), message, message_size);
        close(fd);
        return -1;
    }
    struct jpeg_compress_struct info;
    rchat_jpeg_error error;
    memset(&info, 0, sizeof info);
    /* The progressive scan script: one DC scan, then per component and AC coefficient a first
     * scan and its successive-approximation refinements. */
    const int bands = 3 * 63, per_band = scans_per_band < 1 ? 1 : scans_per_band > 14 ? 14 : scans_per_band;
    jpeg_scan_info *const script = scans_per_band > 0 ? calloc(1 + (size_t)bands * (size_t)per_band, sizeof *script) : NULL;
    rchat_jpeg_install(&error, &info.err);
    if (setjmp(error.jump)) {
        rchat_jpeg_copy_message(error.message, message, message_size);
        jpeg_destroy_compress(&info);
        fclose(file);
        free(script);
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_stdio_dest(&info, file);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    if (script) {
        int n = 0;
        script[n++] = (jpeg_scan_info){ .comps_in_scan = 3, .component_index = { 0, 1, 2 } };
        for (int component = 0; component < 3; component++) {
            for (int k = 1; k < 64; k++) {
                script[n++] = (jpeg_scan_info){ .comps_in_scan = 1, .component_index = { component }, .Ss = k, .Se = k, .Ah = 0, .Al = per_band - 1 };
                for (int bit = per_band - 1; bit >= 1; bit--) {
                    script[n++] = (jpeg_scan_info){ .comps_in_scan = 1, .component_index = { component }, .Ss = k, .Se = k, .Ah = bit, .Al = bit - 1 };
                }
            }
        }
        info.scan_info = script;
        info.num_scans = n;
    }
    jpeg_start_compress(&info, TRUE);
    if (orientation >= 1 && orientation <= 8) {
        /* "Exif\0\0", a big-endian TIFF header, IFD0 with one entry: Orientation, SHORT, 1. */
        const unsigned char exif[] = {
            'E', 'x', 'i', 'f', 0, 0, 'M', 'M', 0, 42, 0, 0, 0, 8,
            0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, (unsigned char)orientation, 0, 0, 0, 0, 0, 0,
        };
        jpeg_write_marker(&info, RCHAT_EXIF_MARKER, exif, sizeof exif);
    }
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)info.next_scanline * (size_t)width * 3);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    free(script);
    if (fclose(file) != 0) {
        rchat_jpeg_copy_message(strerror(errno), message, message_size);
        return -1;
    }
    return 0;
}
