#ifndef RCHAT_CJPEG_H
#define RCHAT_CJPEG_H

#include <stddef.h>

/*
 * libjpeg(-turbo) reports errors by calling `error_exit`, which must not return: here it
 * longjmps back into the C function that called the library, and every function below
 * turns that into a return value and the library's own message. Swift never sees a jump.
 * Warnings (for example "Premature end of JPEG file", after which libjpeg would fill the
 * rest with grey) are errors too: a damaged picture is refused, not shown half made up. So is
 * a progressive JPEG of more than 500 scans (minutes of work from a small file).
 */

/* One decode in progress: libjpeg's decompressor, its file and the jump target. */
typedef struct rchat_jpeg_reader rchat_jpeg_reader;

/*
 * Opens `path` and reads the header only. On failure returns NULL, with `*error_number`
 * set to the errno of a failed open (0 when the file opened but is not a readable JPEG)
 * and the cause in `message`.
 */
rchat_jpeg_reader *rchat_jpeg_open(const char *path, int *error_number, char *message, size_t message_size);

int rchat_jpeg_width(const rchat_jpeg_reader *reader);
int rchat_jpeg_height(const rchat_jpeg_reader *reader);

/* The EXIF Orientation (1–8: how the stored pixels are turned for display); 1 without EXIF. */
int rchat_jpeg_orientation(const rchat_jpeg_reader *reader);

/*
 * Decodes the whole image as 8-bit RGBA (alpha 255) into `rgba`, which holds
 * width × height × 4 bytes. 0 on success; -1 with the cause in `message`.
 */
int rchat_jpeg_read_rgba(rchat_jpeg_reader *reader, unsigned char *rgba, char *message, size_t message_size);

/* Releases the decoder and closes the file. */
void rchat_jpeg_close(rchat_jpeg_reader *reader);

/*
 * Writes `rgb` (width × height × 3 bytes) as a JPEG at `quality` (1–100) to a new 0600 file at
 * `path` (replaced if it exists), with an EXIF Orientation when `orientation` is 1–8 (none for
 * 0). `scans_per_band` 0 writes a baseline JPEG; 1–14 a progressive one with that many scans for
 * each component's each AC coefficient (1 + 189 × scans_per_band scans in all).
 * 0 on success; -1 with the cause in `message`.
 */
int rchat_jpeg_write_rgb(const char *path, const unsigned char *rgb, int width, int height, int quality,
                         int orientation, int scans_per_band, char *message, size_t message_size);

#endif
