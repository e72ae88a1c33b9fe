// libpng 1.6, used through its simplified API (png_image_*): it keeps libpng's longjmp
// inside the library and reports a failure as a return value and a message.
#include <png.h>

// PNG_FORMAT_RGBA is a composite macro Swift does not import.
static inline png_uint_32 rchat_png_format_rgba(void) { return PNG_FORMAT_RGBA; }
