// The C library's column widths (glibc, no library to link): what ncurses and terminals
// that follow the C library (xterm, VTE, tmux) use to place characters.
#include <locale.h>
#include <wchar.h>

// wcwidth/wcswidth are X/Open and hidden from Swift's Glibc.
extern int wcwidth(wchar_t c);
extern int wcswidth(const wchar_t *s, size_t n);

// The width of one code point in a UTF-8 LC_CTYPE made once (nil locale: the process's),
// so the answer does not depend on the process locale: -1 for what is not printable or
// not assigned in this C library's Unicode version.
static inline int rchat_wcwidth_in(locale_t loc, unsigned int c) {
    locale_t old = loc ? uselocale(loc) : (locale_t)0;
    int w = wcwidth((wchar_t)c);
    if (loc) uselocale(old);
    return w;
}

// The same for a string of code points (for tests that compare with the C library).
static inline int rchat_wcswidth_in(locale_t loc, const unsigned int *s, size_t n) {
    locale_t old = loc ? uselocale(loc) : (locale_t)0;
    int w = wcswidth((const wchar_t *)s, n);
    if (loc) uselocale(old);
    return w;
}
