// The C surface Swift needs and cannot import by itself: Linux I/O headers, OpenSSL and zlib
// (whose init functions are macros), kept as small inline wrappers. Like SwiftNIO's CNIOLinux.
#ifndef C_HUDDLE_SHIMS_H
#define C_HUDDLE_SHIMS_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <signal.h>

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/core_names.h>

#include <zlib.h>

// zlib: deflateInit2/inflateInit2 are macros (they pass the library version and struct size).
static inline int huddle_deflate_init2(z_streamp stream, int level, int window_bits, int mem_level) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, mem_level, Z_DEFAULT_STRATEGY);
}
static inline int huddle_inflate_init2(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

// OpenSSL: these are macros over SSL_CTX_ctrl / SSL_ctrl.
static inline long huddle_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}
static inline long huddle_ssl_ctx_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}
static inline long huddle_ssl_set_mode(SSL *ssl, long mode) {
    return SSL_set_mode(ssl, mode);
}
static inline long huddle_ssl_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

// accept4 needs _GNU_SOURCE, which must not leak into every Swift importer: defined in shims.c.
int huddle_accept4_nonblocking(int fd, struct sockaddr *address, socklen_t *length);

// pthread_setname_np needs _GNU_SOURCE too. Names the calling thread (15 bytes at most).
void huddle_set_current_thread_name(const char *name);

// sync_file_range needs _GNU_SOURCE as well: starts writeback of [offset, offset + count) of fd
// and waits until it is on the disk (data only, no metadata: the final fsync still follows).
int huddle_write_back_range(int fd, long long offset, long long count);

// SSL_OP_* are built with a macro Swift cannot import.
static inline void huddle_ssl_ctx_disable_renegotiation_and_compression(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
}

#endif
