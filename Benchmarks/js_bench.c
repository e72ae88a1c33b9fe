// NATS JetStream load client built on libnats (the C client), 127.0.0.1 only: the engine's
// own ceiling for the load `rchat-bench cluster` sends through the relay cluster.
// Payload: bytes 0-7 sequence number, 8-15 CLOCK_MONOTONIC send time (ns), rest filler.
//
// Each run makes a stream of its own (one subject, file storage, REPLICAS replicas, work-queue
// retention: a message is deleted once its consumer acknowledged it, as the relay deletes a
// held frame once the recipient did), and deletes it at the end.
//
// usage:
//   js_bench online URL STREAM N SIZE WINDOW RATE REPLICAS MAX_S
//       A push consumer with explicit acks is subscribed first; then N messages are
//       published with JetStream acks, at most WINDOW un-acked in flight, paced at RATE
//       msg/s (0 = as fast as possible). Rate = N / (last receive - first send);
//       latency = receive time - send time in the payload.
//   js_bench drain URL STREAM N SIZE WINDOW REPLICAS MAX_S
//       N messages published with acks (nobody consuming; not timed), then a consumer is
//       made and all N received and acknowledged. Rate = N / (last receive - subscribe).
//   Both print one line: RESULT mode=… got=N rate=… lat_us_p50=… lat_us_p99=…
//   Exit 0 when all N were received, 3 when not within MAX_S, 1 on an error (one line).
// Built by `rchat-bench cluster` into .build/js-bench/js_bench:
//   cc -O2 -o js_bench js_bench.c $(pkg-config --cflags --libs libnats) -lpthread
#include <nats/nats.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static long acked = 0, failed = 0;
static long want = 0, got = 0, dups = 0;
static unsigned char *seen;
static double *lat_us;
static uint64_t last_recv_ns = 0;

static void fail(const char *what, natsStatus s, jsErrCode jerr) {
    fprintf(stderr, "js_bench: %s: %s (JetStream error %d)\n", what, natsStatus_GetText(s), (int)jerr);
    exit(1);
}

static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
    (void)js; (void)closure;
    pthread_mutex_lock(&mu);
    if (pa != NULL) acked++;
    if (pae != NULL) failed++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    natsMsg_Destroy(msg);
}

static void on_msg(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure) {
    (void)nc; (void)sub; (void)closure;
    uint64_t t = now_ns();
    if (natsMsg_GetDataLength(msg) >= 16) {
        uint64_t seq, ts;
        memcpy(&seq, natsMsg_GetData(msg), 8);
        memcpy(&ts, natsMsg_GetData(msg) + 8, 8);
        pthread_mutex_lock(&mu);
        if (seq < (uint64_t)want && !seen[seq]) {
            seen[seq] = 1;
            lat_us[got++] = (double)(t - ts) / 1000.0;
            last_recv_ns = t;
            if (got == want) pthread_cond_broadcast(&cv);
        } else {
            dups++;
        }
        pthread_mutex_unlock(&mu);
    }
    natsMsg_Ack(msg, NULL);
    natsMsg_Destroy(msg);
}

static void deadline_ts(struct timespec *ts, double secs_from_now) {
    clock_gettime(CLOCK_REALTIME, ts);
    double s = ts->tv_sec + ts->tv_nsec * 1e-9 + secs_from_now;
    ts->tv_sec = (time_t)s;
    ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Publishes n messages with acks, at most `window` in flight, paced at `rate` (0: at once).
// Returns the time of the first send.
static uint64_t publish(jsCtx *js, const char *subject, long n, int size, long window, double rate, double max_s) {
    unsigned char *buf = malloc((size_t)size);
    for (int i = 0; i < size; i++) buf[i] = (unsigned char)(i * 31 + 7);
    uint64_t t0 = now_ns();
    struct timespec dl;
    deadline_ts(&dl, max_s);
    for (long sent = 0; sent < n; sent++) {
        if (rate > 0) {
            uint64_t due = t0 + (uint64_t)((double)sent / rate * 1e9), now = now_ns();
            if (due > now) {
                struct timespec st = {(time_t)((due - now) / 1000000000ull), (long)((due - now) % 1000000000ull)};
                nanosleep(&st, NULL);
            }
        }
        pthread_mutex_lock(&mu);
        while (sent - acked - failed >= window) {
            if (pthread_cond_timedwait(&cv, &mu, &dl) != 0) break;
        }
        int stuck = sent - acked - failed >= window;
        pthread_mutex_unlock(&mu);
        if (stuck) break;
        uint64_t seq = (uint64_t)sent, ts = now_ns();
        memcpy(buf, &seq, 8);
        memcpy(buf + 8, &ts, 8);
        natsStatus s = js_PublishAsync(js, subject, buf, size, NULL);
        if (s != NATS_OK) fail("publish", s, 0);
    }
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = (int64_t)(max_s * 1000);
    js_PublishAsyncComplete(js, &po);
    free(buf);
    return t0;
}

static natsSubscription *consume(jsCtx *js, const char *stream, const char *subject) {
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Stream = stream;
    so.ManualAck = true;
    so.Config.AckPolicy = js_AckExplicit;
    so.Config.DeliverPolicy = js_DeliverAll;
    so.Config.MaxAckPending = 8192; // the relay's handover window
    natsSubscription *sub = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_Subscribe(&sub, js, subject, on_msg, NULL, NULL, &so, &jerr);
    if (s != NATS_OK) fail("subscribe", s, jerr);
    natsSubscription_SetPendingLimits(sub, -1, -1);
    return sub;
}

int main(int argc, char **argv) {
    int online = argc == 10 && strcmp(argv[1], "online") == 0;
    int drain = argc == 9 && strcmp(argv[1], "drain") == 0;
    if (!online && !drain) {
        fprintf(stderr, "usage: js_bench online URL STREAM N SIZE WINDOW RATE REPLICAS MAX_S\n"
                        "       js_bench drain URL STREAM N SIZE WINDOW REPLICAS MAX_S\n");
        return 2;
    }
    const char *url = argv[2], *stream = argv[3];
    long n = atol(argv[4]);
    int size = atoi(argv[5]);
    long window = atol(argv[6]);
    double rate = online ? atof(argv[7]) : 0;
    int replicas = atoi(argv[online ? 8 : 7]);
    double max_s = atof(argv[online ? 9 : 8]);
    if (n < 1 || window < 1 || replicas < 1 || max_s <= 0) { fprintf(stderr, "js_bench: N, WINDOW, REPLICAS and MAX_S must be positive\n"); return 2; }
    if (size < 16) size = 16;
    want = n;
    seen = calloc((size_t)n, 1);
    lat_us = calloc((size_t)n, sizeof(double));
    char subject[256];
    snprintf(subject, sizeof subject, "%s.mailbox", stream);

    natsConnection *nc = NULL;
    natsStatus s = natsConnection_ConnectTo(&nc, url);
    if (s != NATS_OK) fail("connect", s, 0);
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.PublishAsync.MaxPending = window;
    jo.PublishAsync.AckHandler = on_ack;
    jo.Wait = 10000;
    jsCtx *js = NULL;
    if ((s = natsConnection_JetStream(&js, nc, &jo)) != NATS_OK) fail("JetStream context", s, 0);

    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    const char *subjects[1] = {subject};
    cfg.Name = stream;
    cfg.Subjects = subjects;
    cfg.SubjectsLen = 1;
    cfg.Storage = js_FileStorage;
    cfg.Retention = js_WorkQueuePolicy;
    cfg.Replicas = replicas;
    jsErrCode jerr = 0;
    if ((s = js_AddStream(NULL, js, &cfg, NULL, &jerr)) != NATS_OK) fail("add stream", s, jerr);

    uint64_t start;
    natsSubscription *sub = NULL;
    if (online) {
        sub = consume(js, stream, subject);
        start = publish(js, subject, n, size, window, rate, max_s);
    } else {
        publish(js, subject, n, size, window, 0, max_s);
        start = now_ns();
        sub = consume(js, stream, subject);
    }
    struct timespec dl;
    deadline_ts(&dl, max_s);
    pthread_mutex_lock(&mu);
    while (got < want) {
        if (pthread_cond_timedwait(&cv, &mu, &dl) != 0) break;
    }
    pthread_mutex_unlock(&mu);
    natsSubscription_Unsubscribe(sub);
    natsSubscription_Destroy(sub);
    pthread_mutex_lock(&mu); // no callback runs any more
    double secs = (double)(last_recv_ns - start) / 1e9;
    qsort(lat_us, (size_t)got, sizeof(double), cmpd);
    printf("RESULT mode=%s got=%ld want=%ld acked=%ld failed=%ld dups=%ld secs=%.4f rate=%.0f lat_us_p50=%.0f lat_us_p99=%.0f\n",
           online ? "online" : "drain", got, want, acked, failed, dups, secs, got / (secs > 0 ? secs : 1e-9),
           got ? lat_us[got / 2] : 0, got ? lat_us[(long)(got * 0.99)] : 0);
    fflush(stdout);
    long received = got;
    pthread_mutex_unlock(&mu);
    js_DeleteStream(js, stream, NULL, NULL);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    nats_Close();
    return received == want ? 0 : 3;
}
