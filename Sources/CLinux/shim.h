// glibc and Linux calls that the Glibc module leaves out (it is built without _GNU_SOURCE).
#include <fcntl.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

// renameat2(RENAME_EXCHANGE): two paths trade places in one step, so a directory that already
// holds a render can be replaced by a finished one with no moment where neither is there.
// Called through syscall(2): glibc declares renameat2 only under _GNU_SOURCE.
static inline int quire_rename_exchange(const char *from, const char *to) {
    return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 2 /* RENAME_EXCHANGE */);
}

#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

// The process's environment (a C global: Swift cannot read it safely under strict concurrency).
static inline char **quire_environment(void) { return environ; }

// Runs `argv` (argv[0] found on PATH) with its standard output read into `output` (at most
// `capacity` bytes, the rest read and dropped), its standard error to /dev/null. Returns the exit
// status, or -1 when it could not be started or did not exit normally.
static inline int quire_run_capturing(char *const argv[], char *output, size_t capacity, size_t *length) {
    int fds[2];
    *length = 0;
    if (pipe2(fds, O_CLOEXEC) != 0) return -1;
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int spawned = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (spawned != 0) {
        close(fds[0]);
        return -1;
    }
    char buffer[4096];
    ssize_t got;
    while ((got = read(fds[0], buffer, sizeof buffer)) != 0) {
        if (got < 0) {
            if (errno == EINTR) continue;
            break;
        }
        size_t room = capacity - *length;
        size_t take = (size_t)got < room ? (size_t)got : room;
        memcpy(output + *length, buffer, take);
        *length += take;
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
