/*
 * ack_writers: acknowledged durable writes on Huddle's /v1, measured from C so that the client
 * is not the bottleneck (the Python client of bench/throughput.py was: BENCHMARKS.md).
 *
 *   ack_writers -p PORT [-c WRITERS] [-d SECS] [-W WARMUP] [-s SIZE] [-x PID] [-L LABEL]
 *               [-t TIMEOUT]
 *
 * WRITERS (default 100) connections on ws://127.0.0.1:PORT/v1 (subprotocol huddle.v1, no
 * compression), each signs up its own user (at most 4 sign-ups in flight: the server's limit
 * per client address), then publishes to its own room, room:aw<run tag>_<i>, one request at a
 * time: {"id":"<n>","op":"publish","channel":…,"data":"<SIZE bytes>"}, the next only after the
 * ok of the one before (1 in flight per writer, closed loop). Run the server with
 * --fsync always to count durable writes: its ok then means the write is on disk.
 * WARMUP seconds (default 1), then SECS measured (default 5); then every writer stops and the
 * replies still owed are awaited (up to 5 s). Every refusal or missing reply is counted:
 * raise the server's --rate-limit, --user-rate-limit, --user-publish-bytes and
 * --room-bytes-per-user so that none is refused.
 * -x PID: the server's CPU time (utime + stime from /proc) over the window.
 * -t TIMEOUT: the whole run is abandoned after this many seconds (default 60).
 *
 * Output: a summary on stderr and one line on stdout:
 *   RESULT label=… writers=… dur=… acks=… acks_per_s=… ack_p50_us=… ack_p99_us=… ack_max_us=…
 *          refused=… unanswered=… setup_failed=… [srv_cpu_pct=… acks_per_srv_cpu_s=…]
 *          gen_cpu_pct=… host_busy_pct=…
 * Exit status 0 only when every writer was set up and nothing was refused or left unanswered.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { S_CONNECTING, S_HANDSHAKE, S_WAIT_SIGNUP, S_SIGNUP, S_READY, S_PUBLISHING, S_CLOSED };

typedef struct writer {
    int fd, state, index, want_out;
    uint64_t seq, sent_ns, retry_at_ns;
    uint8_t *in; size_t in_len, in_cap;
    uint8_t *out; size_t out_len, out_off, out_cap;
} writer_t;

static int o_port, o_writers = 100, o_size = 32, o_pid;
static double o_secs = 5, o_warmup = 1, o_timeout = 60;
static const char *o_label = "ack_writers";

static writer_t *writers;
static int epfd, signups_in_flight, n_ready, setup_failed;
static uint64_t acks, refused, unanswered, outstanding;
static char tag[16];
static uint32_t *lat_us; static size_t lat_n, lat_cap;
static int measuring, stopping;

static uint64_t now_ns(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000ull + (uint64_t) t.tv_nsec;
}
static void die(const char *what) { perror(what); exit(2); }
static void grow(uint8_t **buf, size_t *cap, size_t need) {
    if (need <= *cap) return;
    size_t c = *cap ? *cap : 4096; while (c < need) c *= 2;
    if (!(*buf = realloc(*buf, c))) die("realloc");
    *cap = c;
}

/* ---- /proc: the server's CPU and the host's busy time ---- */
static double proc_cpu_s(int pid) {
    char path[64], buf[2048]; snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r"); if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f); fclose(f); buf[n] = 0;
    char *p = strrchr(buf, ')'); if (!p) return 0;
    unsigned long ut = 0, st = 0;
    /* fields 14 and 15 (utime, stime) are the 12th and 13th after the ") " */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return 0;
    return (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
}
static double host_busy_s(void) {
    FILE *f = fopen("/proc/stat", "r"); if (!f) return 0;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f); if (n < 8) return 0;
    return (double) (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double) sysconf(_SC_CLK_TCK);
}
static double self_cpu_s(void) {
    struct rusage r; getrusage(RUSAGE_SELF, &r);
    return (double) r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + (double) r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

/* ---- sockets ---- */
static void watch(writer_t *w, int out) {
    if (w->want_out == out) return;
    struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = w };
    if (epoll_ctl(epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0) die("epoll_ctl");
    w->want_out = out;
}
static void fail(writer_t *w, const char *why, const uint8_t *msg, size_t len) {
    if (w->state == S_CLOSED) return;
    if (w->state < S_READY) setup_failed++;
    else if (w->state == S_PUBLISHING) { unanswered++; outstanding--; }
    if (w->state == S_SIGNUP) signups_in_flight--;
    if (setup_failed + unanswered < 6) fprintf(stderr, "[%s] writer %d: %s %.*s\n", o_label, w->index, why, (int) (len > 300 ? 300 : len), msg ? (const char *) msg : "");
    epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
    close(w->fd); w->fd = -1; w->state = S_CLOSED;
}
static void flush(writer_t *w) {
    while (w->out_off < w->out_len) {
        ssize_t n = send(w->fd, w->out + w->out_off, w->out_len - w->out_off, MSG_NOSIGNAL);
        if (n < 0) { if (errno == EAGAIN || errno == EWOULDBLOCK) { watch(w, 1); return; } fail(w, "send failed", NULL, 0); return; }
        w->out_off += (size_t) n;
    }
    w->out_len = w->out_off = 0; watch(w, 0);
}
static void write_bytes(writer_t *w, const void *p, size_t n) {
    grow(&w->out, &w->out_cap, w->out_len + n);
    memcpy(w->out + w->out_len, p, n); w->out_len += n;
    flush(w);
}
/* a masked client frame with a zero key (the payload is sent as is) */
static void send_frame(writer_t *w, int opcode, const char *payload, size_t len) {
    uint8_t head[14]; size_t h = 0;
    head[h++] = (uint8_t) (0x80 | opcode);
    if (len < 126) head[h++] = (uint8_t) (0x80 | len);
    else { head[h++] = 0x80 | 126; head[h++] = (uint8_t) (len >> 8); head[h++] = (uint8_t) len; }
    memset(head + h, 0, 4); h += 4;
    grow(&w->out, &w->out_cap, w->out_len + h + len);
    memcpy(w->out + w->out_len, head, h); memcpy(w->out + w->out_len + h, payload, len);
    w->out_len += h + len;
    flush(w);
}

static void start_signup(writer_t *w) {
    char req[512];
    int n = snprintf(req, sizeof req, "{\"id\":\"u\",\"op\":\"signup\",\"username\":\"aw%s_%d\",\"email\":\"aw%s_%d@bench.test\",\"password\":\"benchpass1\"}",
                     tag, w->index, tag, w->index);
    w->state = S_SIGNUP; signups_in_flight++;
    send_frame(w, 1, req, (size_t) n);
}
static void publish(writer_t *w) {
    char req[1024];
    int n = snprintf(req, sizeof req, "{\"id\":\"%" PRIu64 "\",\"op\":\"publish\",\"channel\":\"room:aw%s_%d\",\"data\":\"", ++w->seq, tag, w->index);
    for (int i = 0; i < o_size && n < (int) sizeof req - 3; i++) req[n++] = 'x';
    req[n++] = '"'; req[n++] = '}';
    w->state = S_PUBLISHING; w->sent_ns = now_ns(); outstanding++;
    send_frame(w, 1, req, (size_t) n);
}

static uint64_t retry_after_ns(const uint8_t *msg, size_t len) {
    const uint8_t *r = memmem(msg, len, "\"retry_after_ms\":", 17);
    long ms = r ? atol((const char *) r + 17) : 1000;
    return (uint64_t) (ms > 0 ? ms : 100) * 1000000ull;
}

/* one text message from the server */
static void on_message(writer_t *w, const uint8_t *msg, size_t len) {
    if (memmem(msg, len, "\"event\":", 8) && !memmem(msg, len, "\"ok\":", 5)) return; /* events: none asked for */
    int ok = memmem(msg, len, "\"ok\":true", 9) != NULL;
    if (w->state == S_SIGNUP) {
        signups_in_flight--;
        if (ok) { w->state = S_READY; n_ready++; return; }
        if (memmem(msg, len, "too_many_attempts", 17) || memmem(msg, len, "\"busy\"", 6)) {
            w->state = S_WAIT_SIGNUP; w->retry_at_ns = now_ns() + retry_after_ns(msg, len); return;
        }
        fail(w, "signup refused:", msg, len); return;
    }
    if (w->state != S_PUBLISHING) { fail(w, "unexpected message:", msg, len); return; }
    outstanding--;
    uint64_t t = now_ns();
    if (ok) {
        if (measuring) {
            if (lat_n == lat_cap) { lat_cap = lat_cap ? lat_cap * 2 : 1 << 16; if (!(lat_us = realloc(lat_us, lat_cap * sizeof *lat_us))) die("realloc"); }
            lat_us[lat_n++] = (uint32_t) ((t - w->sent_ns) / 1000); acks++;
        }
    } else {
        if (refused < 5) fprintf(stderr, "[%s] publish refused: %.*s\n", o_label, (int) (len > 300 ? 300 : len), msg);
        refused++;
    }
    w->state = S_READY;
    if (!stopping) publish(w);
}

static void on_readable(writer_t *w) {
    uint8_t buf[65536];
    for (;;) {
        ssize_t n = recv(w->fd, buf, sizeof buf, 0);
        if (n == 0) { fail(w, "closed by the server", NULL, 0); return; }
        if (n < 0) { if (errno == EAGAIN || errno == EWOULDBLOCK) break; fail(w, "recv failed", NULL, 0); return; }
        grow(&w->in, &w->in_cap, w->in_len + (size_t) n);
        memcpy(w->in + w->in_len, buf, (size_t) n); w->in_len += (size_t) n;
    }
    size_t off = 0;
    if (w->state == S_HANDSHAKE) {
        uint8_t *end = memmem(w->in, w->in_len, "\r\n\r\n", 4);
        if (!end) return;
        if (w->in_len < 12 || memcmp(w->in, "HTTP/1.1 101", 12)) { fail(w, "upgrade refused:", w->in, (size_t) (end - w->in)); return; }
        off = (size_t) (end + 4 - w->in);
        w->state = S_WAIT_SIGNUP; w->retry_at_ns = 0;
    }
    while (w->state != S_CLOSED && w->in_len - off >= 2) {
        uint8_t *p = w->in + off; size_t avail = w->in_len - off, h = 2;
        uint64_t len = p[1] & 0x7f;
        if (len == 126) { if (avail < 4) break; len = (uint64_t) p[2] << 8 | p[3]; h = 4; }
        else if (len == 127) { if (avail < 10) break; len = 0; for (int i = 0; i < 8; i++) len = len << 8 | p[2 + i]; h = 10; }
        if (avail - h < len) break;
        int opcode = p[0] & 0x0f;
        if (opcode == 1) on_message(w, p + h, (size_t) len);
        else if (opcode == 9) { /* ping: answer with a pong carrying the same bytes */
            char body[126]; size_t bl = len < 126 ? (size_t) len : 125; memcpy(body, p + h, bl);
            send_frame(w, 10, body, bl);
        } else if (opcode == 8) { fail(w, "close frame:", p + h, (size_t) len); return; }
        off += h + (size_t) len;
    }
    if (w->state == S_CLOSED) return;
    memmove(w->in, w->in + off, w->in_len - off); w->in_len -= off;
}

static void on_connected(writer_t *w) {
    int err = 0; socklen_t l = sizeof err;
    getsockopt(w->fd, SOL_SOCKET, SO_ERROR, &err, &l);
    if (err) { errno = err; fail(w, "connect failed", NULL, 0); return; }
    char req[512];
    int n = snprintf(req, sizeof req, "GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: huddle.v1\r\n\r\n", o_port);
    w->state = S_HANDSHAKE;
    write_bytes(w, req, (size_t) n);
}

static int cmp_u32(const void *a, const void *b) { uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b; return x < y ? -1 : x > y; }
static double pct(double p) { if (!lat_n) return 0; size_t i = (size_t) (p / 100.0 * (double) (lat_n - 1) + 0.5); return lat_us[i]; }

int main(int argc, char **argv) {
    int o;
    while ((o = getopt(argc, argv, "p:c:d:W:s:x:L:t:")) != -1) switch (o) {
        case 'p': o_port = atoi(optarg); break;
        case 'c': o_writers = atoi(optarg); break;
        case 'd': o_secs = atof(optarg); break;
        case 'W': o_warmup = atof(optarg); break;
        case 's': o_size = atoi(optarg); break;
        case 'x': o_pid = atoi(optarg); break;
        case 'L': o_label = optarg; break;
        case 't': o_timeout = atof(optarg); break;
        default: fprintf(stderr, "usage: ack_writers -p PORT [-c WRITERS] [-d SECS] [-W WARMUP] [-s SIZE] [-x PID] [-L LABEL] [-t TIMEOUT]\n"); return 2;
    }
    if (o_port <= 0 || o_writers <= 0 || o_size < 0 || o_size > 900) { fprintf(stderr, "ack_writers: -p PORT is required; -c > 0; -s 0..900\n"); return 2; }
    uint64_t t0 = now_ns();
    snprintf(tag, sizeof tag, "%lx", (unsigned long) ((t0 / 1000) ^ (uint64_t) getpid()) & 0xffffffful);
    if ((epfd = epoll_create1(0)) < 0) die("epoll_create1");
    writers = calloc((size_t) o_writers, sizeof *writers);
    struct sockaddr_in server = { .sin_family = AF_INET, .sin_port = htons((uint16_t) o_port) };
    inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
    for (int i = 0; i < o_writers; i++) {
        writer_t *w = &writers[i]; w->index = i;
        if ((w->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0) die("socket");
        int one = 1; setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.ptr = w };
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0) die("epoll_ctl add");
        w->want_out = 1; w->state = S_CONNECTING;
        if (connect(w->fd, (struct sockaddr *) &server, sizeof server) < 0 && errno != EINPROGRESS) fail(w, "connect failed", NULL, 0);
    }
    uint64_t deadline = t0 + (uint64_t) (o_timeout * 1e9), window_start = 0, window_end = 0, drain_end = 0, setup_done = 0;
    double srv0 = 0, srv1 = 0, self0 = 0, self1 = 0, host0 = 0, host1 = 0;
    struct epoll_event evs[256];
    for (;;) {
        uint64_t now = now_ns();
        if (now >= deadline) { fprintf(stderr, "[%s] timed out after %.0f s\n", o_label, o_timeout); break; }
        if (!setup_done) {
            for (int i = 0; i < o_writers && signups_in_flight < 4; i++)
                if (writers[i].state == S_WAIT_SIGNUP && writers[i].retry_at_ns <= now) start_signup(&writers[i]);
            if (n_ready + setup_failed == o_writers) {
                setup_done = now;
                if (n_ready == 0) break;
                fprintf(stderr, "[%s] %d writers set up; publishing\n", o_label, n_ready);
                for (int i = 0; i < o_writers; i++) if (writers[i].state == S_READY) publish(&writers[i]);
                window_start = now + (uint64_t) (o_warmup * 1e9); window_end = window_start + (uint64_t) (o_secs * 1e9);
            }
        } else if (!measuring && !stopping && now >= window_start) {
            measuring = 1; srv0 = o_pid ? proc_cpu_s(o_pid) : 0; self0 = self_cpu_s(); host0 = host_busy_s();
        } else if (measuring && now >= window_end) {
            measuring = 0; stopping = 1; window_end = now;
            srv1 = o_pid ? proc_cpu_s(o_pid) : 0; self1 = self_cpu_s(); host1 = host_busy_s();
            drain_end = now + 5000000000ull;
        }
        if (stopping && (outstanding == 0 || now >= drain_end)) break;
        int n = epoll_wait(epfd, evs, 256, 10);
        if (n < 0) { if (errno == EINTR) continue; die("epoll_wait"); }
        for (int i = 0; i < n; i++) {
            writer_t *w = evs[i].data.ptr;
            if (w->state == S_CLOSED) continue;
            if (w->state == S_CONNECTING) { if (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) on_connected(w); continue; }
            if (evs[i].events & EPOLLOUT) flush(w);
            if (w->state != S_CLOSED && (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP))) on_readable(w);
        }
    }
    if (measuring) { /* timed out inside the window */
        window_end = now_ns(); srv1 = o_pid ? proc_cpu_s(o_pid) : 0; self1 = self_cpu_s(); host1 = host_busy_s();
    }
    unanswered += outstanding;
    double T = window_start && window_end > window_start ? (double) (window_end - window_start) / 1e9 : 0;
    qsort(lat_us, lat_n, sizeof *lat_us, cmp_u32);
    double srv = srv1 - srv0;
    fprintf(stderr, "[%s] %d writers (%d set up in %.2f s), %.2f s: %" PRIu64 " acks = %.0f/s, ack p50 %.0f us p99 %.0f us max %.0f us; refused %" PRIu64 ", unanswered %" PRIu64 "\n",
            o_label, o_writers, n_ready, setup_done ? (double) (setup_done - t0) / 1e9 : -1.0, T, acks, T ? acks / T : 0, pct(50), pct(99), lat_n ? (double) lat_us[lat_n - 1] : 0, refused, unanswered);
    printf("RESULT label=%s writers=%d ready=%d setup_failed=%d dur=%.2f acks=%" PRIu64 " acks_per_s=%.0f ack_p50_us=%.0f ack_p99_us=%.0f ack_max_us=%.0f refused=%" PRIu64 " unanswered=%" PRIu64,
           o_label, o_writers, n_ready, setup_failed, T, acks, T ? acks / T : 0, pct(50), pct(99), lat_n ? (double) lat_us[lat_n - 1] : 0, refused, unanswered);
    if (o_pid && T) printf(" srv_cpu_pct=%.0f acks_per_srv_cpu_s=%.0f", 100 * srv / T, srv > 0 ? acks / srv : 0);
    if (T) printf(" gen_cpu_pct=%.0f host_busy_pct=%.0f", 100 * (self1 - self0) / T, 100 * (host1 - host0) / T);
    printf("\n");
    return (T > 0 && n_ready == o_writers && refused == 0 && unanswered == 0) ? 0 : 1;
}
