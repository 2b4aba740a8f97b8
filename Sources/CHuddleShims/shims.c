#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include "CHuddleShims.h"

int huddle_accept4_nonblocking(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

void huddle_set_current_thread_name(const char *name) {
    pthread_setname_np(pthread_self(), name);
}

int huddle_write_back_range(int fd, long long offset, long long count) {
    return sync_file_range(fd, offset, count,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
}
