// <sys/epoll.h>, eventfd and signalfd are not in Swift's Glibc module.
// Do not define _GNU_SOURCE here: it turns sockaddr parameters into a transparent union.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>
#include <pthread.h>
#include <fcntl.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <malloc.h>

static inline int rchat_errno(void) { return errno; }
static inline int rchat_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0) return -1;
    return fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// epoll_event is packed on x86-64; these keep its layout on the C side.
static const unsigned int RCHAT_EPOLLIN = EPOLLIN;
static const unsigned int RCHAT_EPOLLOUT = EPOLLOUT;
static const unsigned int RCHAT_EPOLLERR = EPOLLERR;
static const unsigned int RCHAT_EPOLLHUP = EPOLLHUP;
static const unsigned int RCHAT_EPOLLRDHUP = EPOLLRDHUP;

static inline int rchat_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }
static inline int rchat_epoll_ctl(int epfd, int op, int fd, unsigned int events) {
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.fd = fd;
    return epoll_ctl(epfd, op, fd, &ev);
}
static inline int rchat_epoll_add(int epfd, int fd, unsigned int events) { return rchat_epoll_ctl(epfd, EPOLL_CTL_ADD, fd, events); }
static inline int rchat_epoll_mod(int epfd, int fd, unsigned int events) { return rchat_epoll_ctl(epfd, EPOLL_CTL_MOD, fd, events); }
static inline int rchat_epoll_del(int epfd, int fd) { return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); }
/// Waits and unpacks up to `max` ready descriptors into two parallel arrays.
static inline int rchat_epoll_wait(int epfd, int *fds, unsigned int *events, int max, int timeout_ms) {
    struct epoll_event evs[256];
    if (max > 256) max = 256;
    int n = epoll_wait(epfd, evs, max, timeout_ms);
    for (int i = 0; i < n; i++) { fds[i] = evs[i].data.fd; events[i] = evs[i].events; }
    return n;
}

static inline int rchat_eventfd(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

/// Blocks SIGTERM and SIGINT in the calling thread (call before any thread starts) and
/// returns a descriptor that becomes readable when one arrives: signals join the event loop.
static inline int rchat_stop_signalfd(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0) return -1;
    return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}
/// The number of the signal read from a signalfd, or -1.
static inline int rchat_read_signalfd(int fd) {
    struct signalfd_siginfo info;
    ssize_t n = read(fd, &info, sizeof info);
    return n == (ssize_t)sizeof info ? (int)info.ssi_signo : -1;
}

static inline void rchat_ignore_sigpipe(void) { signal(SIGPIPE, SIG_IGN); }

/// Names the calling thread (up to 15 bytes) for top -H, perf and /proc/…/comm.
static inline void rchat_name_thread(const char *name) { prctl(PR_SET_NAME, name, 0, 0, 0); }

/// Raises the soft open-file limit to the hard one: a relay holds one descriptor per client.
static inline long rchat_raise_nofile_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
    return (long)rl.rlim_cur;
}

static inline int rchat_set_nodelay(int fd) {
    int one = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}
static inline int rchat_set_reuseaddr(int fd) {
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
}
static inline int rchat_socket_stream(int family) { return socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0); }
static inline ssize_t rchat_send(int fd, const void *buf, size_t len) { return send(fd, buf, len, MSG_NOSIGNAL); }
static inline int rchat_accept(int fd) {
    int c = accept(fd, NULL, NULL);
    if (c >= 0) { rchat_set_nonblocking(c); fcntl(c, F_SETFD, FD_CLOEXEC); }
    return c;
}

/// The port a bound socket got (for port 0), or -1.
static inline int rchat_local_port(int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0) return -1;
    if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

/// Resolves host:port and binds+listens (listen=1) or connects (listen=0, blocking) to the
/// first address that works. Returns the descriptor, or -1 with errno set; -2 when the
/// name does not resolve.
static inline int rchat_tcp_open(const char *host, const char *port, int listen_mode, int backlog) {
    struct addrinfo hints, *res = NULL, *ai;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (listen_mode) hints.ai_flags = AI_PASSIVE;
    if (getaddrinfo(host, port, &hints, &res) != 0) return -2;
    int fd = -1, saved = 0;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) { saved = errno; continue; }
        if (listen_mode) {
            int one = 1;
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0) break;
        } else {
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
        }
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) errno = saved;
    return fd;
}

/// accept(), and the peer's address: 16 bytes in `address` (an IPv4 peer, also one mapped
/// into IPv6, as ::ffff:a.b.c.d), so a relay can count connections per host.
static inline int rchat_accept_peer(int fd, unsigned char *address) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    int c = accept(fd, (struct sockaddr *)&ss, &len);
    if (c < 0) return c;
    rchat_set_nonblocking(c);
    fcntl(c, F_SETFD, FD_CLOEXEC);
    memset(address, 0, 16);
    if (ss.ss_family == AF_INET) {
        address[10] = 0xff; address[11] = 0xff;
        memcpy(address + 12, &((struct sockaddr_in *)&ss)->sin_addr, 4);
    } else if (ss.ss_family == AF_INET6) {
        memcpy(address, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
    }
    return c;
}

/// Connects (blocking) to host:port from the numeric IPv4 or IPv6 address `source` (any
/// port), e.g. a second loopback address. Returns the descriptor, or -1 with errno set; -2
/// when a name does not resolve.
static inline int rchat_tcp_connect_from(const char *host, const char *port, const char *source) {
    struct addrinfo hints, *res = NULL, *src = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST;
    if (getaddrinfo(source, "0", &hints, &src) != 0) return -2;
    hints.ai_flags = 0;
    hints.ai_family = src->ai_family;
    if (getaddrinfo(host, port, &hints, &res) != 0) { freeaddrinfo(src); return -2; }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    int saved = errno;
    if (fd >= 0 && (bind(fd, src->ai_addr, src->ai_addrlen) != 0 || connect(fd, res->ai_addr, res->ai_addrlen) != 0)) {
        saved = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(src);
    freeaddrinfo(res);
    if (fd < 0) errno = saved;
    return fd;
}

/// Hands memory the allocator keeps free back to the system (glibc: also whole free pages
/// inside the heap), so a server's RSS falls again after a burst of connections.
static inline void rchat_release_free_memory(void) { malloc_trim(0); }
