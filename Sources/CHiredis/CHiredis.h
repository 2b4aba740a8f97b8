// hiredis (Debian libhiredis-dev) as a system library, like OpenSSL and zlib: the synchronous
// and asynchronous APIs import as they are, so nothing else is needed here.
#ifndef C_HIREDIS_H
#define C_HIREDIS_H
#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#endif
