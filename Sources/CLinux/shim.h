// glibc and Linux calls that the Glibc module leaves out (it is built without _GNU_SOURCE).
#include <fcntl.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <unistd.h>

// renameat2(RENAME_EXCHANGE): two paths trade places in one step, so a directory that already
// holds a render can be replaced by a finished one with no moment where neither is there.
// Called through syscall(2): glibc declares renameat2 only under _GNU_SOURCE.
static inline int quire_rename_exchange(const char *from, const char *to) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 2 /* RENAME_EXCHANGE */);
}
