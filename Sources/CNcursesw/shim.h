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
// How many colours the terminal has (after start_color).
static inline int rchat_colors(void) { return COLORS; }

// The locale's character set ("UTF-8" or not): decides Unicode or ASCII drawing.
#include <langinfo.h>
static inline const char *rchat_codeset(void) { return nl_langinfo(CODESET); }

// What $TERM's terminfo entry allows, asked before initscr (which ends the process on a
// terminal type it cannot find): 0 usable; 1 no such terminal type; 2 no terminfo
// database; 3 it cannot place the cursor or clear the screen (dumb, a printing terminal).
// Last in this file: term.h defines its capabilities as macros with plain names.
#include <ncursesw/term.h>
static inline int rchat_terminal_check(const char *term) {
    int err = 0;
    if (setupterm(term, 1, &err) != OK) return err == 0 ? 1 : 2;
    const char *cup = tigetstr("cup"), *clear = tigetstr("clear");
    int usable = cup != 0 && cup != (char *)-1 && clear != 0 && clear != (char *)-1;
    del_curterm(cur_term);
    return usable ? 0 : 3;
}

// After endwin: a terminal without an alternate screen (smcup/rmcup: vt100, the Linux
// console) would keep the view's last frame above the shell prompt; clear it, cursor home.
static inline void rchat_clear_unless_alternate_screen(void) {
    const char *rmcup = tigetstr("rmcup"), *clear = tigetstr("clear");
    if (rmcup != 0 && rmcup != (char *)-1 && rmcup[0] != 0) return;
    if (clear != 0 && clear != (char *)-1) { putp(clear); fflush(stdout); }
}

// The window in pixels and in cells, as the terminal told the kernel (TIOCGWINSZ; the
// pixel fields are 0 where it did not): -1 when the descriptor is no terminal.
#include <sys/ioctl.h>
// (Short names: term.h defines `columns` and `lines` as macros.)
static inline int rchat_window_pixels(int fd, int *w, int *h, int *c, int *r) {
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) != 0) return -1;
    *w = ws.ws_xpixel; *h = ws.ws_ypixel; *c = ws.ws_col; *r = ws.ws_row;
    return 0;
}

// A boolean capability of the terminal ncurses set up (1 present, 0 absent, -1 not a
// boolean name): terminfo's Tc and RGB say 24-bit colour.
static inline int rchat_terminfo_flag(const char *name) { return tigetflag((char *)name); }

// Waiting for input with SIGWINCH let in only while it waits. Outside the wait the view
// keeps it blocked (`rchat_block_resize`): a resize that comes while the view draws or
// reads stays pending, and ends the next wait at once (EINTR; curses then has KEY_RESIZE),
// instead of landing outside poll and leaving the view asleep until a key comes.
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <time.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
extern int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);
static inline int rchat_block_resize(int block) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGWINCH);
    return pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &s, 0);
}
// A resize reaches the view whichever thread the kernel hands SIGWINCH to: the engine's and
// the relay readers' threads do not block it, and one of them takes it while the view's
// thread has it blocked (drawing). The handler chained in front of curses' own runs it (so
// curses still makes KEY_RESIZE) and writes a byte to `fd`, which the view's wait polls.
// (Its state in a function: a Swift module emits a header's static inline functions it
// uses, with their statics, but no global of a header; RunTUI calls it, so it is emitted.)
struct rchat_resize_state { int fd; struct sigaction before; };
static inline struct rchat_resize_state *rchat_resize_state(void) { static struct rchat_resize_state state = { -1 }; return &state; }
static void rchat_on_resize(int sig, siginfo_t *info, void *context) {
    struct sigaction *before = &rchat_resize_state()->before;
    if (before->sa_flags & SA_SIGINFO) {
        if (before->sa_sigaction) before->sa_sigaction(sig, info, context);
    } else if (before->sa_handler != SIG_DFL && before->sa_handler != SIG_IGN) {
        before->sa_handler(sig);
    }
    int saved = errno, fd = rchat_resize_state()->fd;
    if (fd >= 0) { char c = 1; ssize_t n = write(fd, &c, 1); (void)n; }
    errno = saved;
}
// Chains the handler in front of the one installed now (curses', after initscr); does
// nothing when it is in front already. 0, or -1 (errno).
static inline int rchat_chain_resize(int fd) {
    struct sigaction now;
    if (sigaction(SIGWINCH, 0, &now) != 0) return -1;
    rchat_resize_state()->fd = fd;
    if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == rchat_on_resize) return 0;
    struct sigaction mine;
    memset(&mine, 0, sizeof mine);
    mine.sa_sigaction = rchat_on_resize;
    mine.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&mine.sa_mask);
    return sigaction(SIGWINCH, &mine, &rchat_resize_state()->before);
}
static inline int rchat_poll_letting_resize_in(struct pollfd *fds, nfds_t n, int timeout_ms) {
    sigset_t waiting;
    pthread_sigmask(SIG_BLOCK, 0, &waiting);
    sigdelset(&waiting, SIGWINCH);
    struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
    return ppoll(fds, n, timeout_ms < 0 ? 0 : &ts, &waiting);
}
