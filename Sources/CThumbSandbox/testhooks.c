#define _GNU_SOURCE
#include "thumbd_sandbox.h"
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

void thumbd_test_crash(void) {
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
}

void thumbd_test_hang(void) {
    for (;;) pause();   // unbounded on purpose: the daemon's SIGKILL is the bound under test
}

int thumbd_test_allocate(uint64_t bytes) {
    if (bytes > SIZE_MAX) return -ENOMEM;
    // volatile: the writes must reach memory, or the compiler may drop the
    // whole malloc/write/free sequence as dead.
    volatile unsigned char *memory = malloc((size_t)bytes);
    if (memory == NULL) return -ENOMEM;
    const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    for (uint64_t offset = 0; offset < bytes; offset += page) memory[offset] = 1;
    if (bytes > 0) memory[bytes - 1] = 1;
    free((void *)memory);
    return 0;
}
