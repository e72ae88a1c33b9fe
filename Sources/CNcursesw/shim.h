// SwiftPM drops ncursesw's pkg-config cflags, so ask for the wide API here.
#define NCURSES_WIDECHAR 1
#include <locale.h>
#include <ncursesw/curses.h>

// Attribute macros and variadics Swift cannot import.
static inline unsigned int rchat_a_bold(void) { return A_BOLD; }
static inline unsigned int rchat_a_reverse(void) { return A_REVERSE; }
static inline unsigned int rchat_a_underline(void) { return A_UNDERLINE; }
static inline unsigned int rchat_a_dim(void) { return A_DIM; }
static inline unsigned int rchat_color_pair(int n) { return COLOR_PAIR(n); }
