/* An LD_PRELOAD shim for the benchmark's tests: madvise(MADV_HUGEPAGE) fails with EPERM (as a seccomp
 * filter or a hardened kernel may make it), every other advice goes to the kernel. */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int madvise(void *addr, size_t length, int advice)
{
    if (advice == MADV_HUGEPAGE) {
        errno = EPERM;
        return -1;
    }
    return (int)syscall(SYS_madvise, addr, length, advice);
}
