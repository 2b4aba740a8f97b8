#define _GNU_SOURCE
#include <pthread.h>
#include <sys/socket.h>
#include "CHuddleShims.h"

int huddle_accept4_nonblocking(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

void huddle_set_current_thread_name(const char *name) {
    pthread_setname_np(pthread_self(), name);
}
