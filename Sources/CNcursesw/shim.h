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

// wcwidth is X/Open and hidden from Swift's Glibc; the view measures text with it.
extern int wcwidth(wchar_t c);
static inline int rchat_wcwidth(unsigned int c) { return wcwidth((wchar_t)c); }

// The locale's character set ("UTF-8" or not): decides Unicode or ASCII drawing.
#include <langinfo.h>
static inline const char *rchat_codeset(void) { return nl_langinfo(CODESET); }
