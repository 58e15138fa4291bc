/* lstat-floor: the system calls a correct DIRTY column cannot do without, and nothing else.
 *
 * usage: lstat-floor WORKTREES PATHS
 *   WORKTREES  lines "<worktree>\t<its index file>"
 *   PATHS      the tracked paths (one worktree's `git ls-files`; every benchmark task is at the
 *              same commit), relative, '/'-separated
 *
 * An in-place edit of a tracked file changes only that file's own stat data, and a new
 * untracked file only its directory's, so without a file watcher (git has no fsmonitor daemon
 * on Linux; git-task runs no daemon) telling whether a worktree is clean needs at least an
 * lstat of its index, of every tracked file and of every directory holding one. This program
 * does exactly those, relative to an open handle on each worktree (as git-task does), on as
 * many threads as there are cores, handing out worktrees one at a time. `bench/run.sh` times
 * it beside `git task list` as the floor of the list scenario: the ratio of the two is what
 * git-task spends on anything else (refs, records, the table).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char **worktrees, **indexes, **paths;
static size_t n_worktrees, n_paths;
static atomic_size_t next_worktree;
static atomic_long failures;

static char **read_lines(const char *file, size_t *n) {
    FILE *f = fopen(file, "r");
    if (!f) { perror(file); exit(2); }
    size_t cap = 1024, len = 0;
    char **out = malloc(cap * sizeof *out), *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    while ((got = getline(&line, &lcap, f)) > 0) {
        if (line[got - 1] == '\n') line[got - 1] = 0;
        if (!*line) continue;
        if (len == cap) out = realloc(out, (cap *= 2) * sizeof *out);
        out[len++] = strdup(line);
    }
    fclose(f);
    *n = len;
    return out;
}

/* Every path to stat in one worktree: its root, each directory holding a tracked path once
 * (paths are sorted, so a directory's entries are together), then the tracked paths. */
static char **targets;
static size_t n_targets;

static void plan(void) {
    targets = malloc((2 * n_paths + 8) * sizeof *targets);
    targets[n_targets++] = ".";
    const char *last = "";
    size_t last_len = 0;
    for (size_t i = 0; i < n_paths; i++) {
        const char *p = paths[i];
        for (const char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
            size_t len = (size_t)(s - p);
            if (len <= last_len && strncmp(p, last, len) == 0 && (len == last_len || last[len] == '/'))
                continue;
            targets[n_targets++] = strndup(p, len);
        }
        const char *slash = strrchr(p, '/');
        last = p;
        last_len = slash ? (size_t)(slash - p) : 0;
    }
    for (size_t i = 0; i < n_paths; i++) targets[n_targets++] = paths[i];
}

static void *work(void *unused) {
    (void)unused;
    struct stat st;
    for (;;) {
        size_t k = atomic_fetch_add(&next_worktree, 1);
        if (k >= n_worktrees) return NULL;
        if (lstat(indexes[k], &st) != 0) atomic_fetch_add(&failures, 1);
        int root = open(worktrees[k], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) { atomic_fetch_add(&failures, 1); continue; }
        for (size_t i = 0; i < n_targets; i++)
            if (fstatat(root, targets[i], &st, AT_SYMLINK_NOFOLLOW) != 0) atomic_fetch_add(&failures, 1);
        close(root);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: lstat-floor WORKTREES PATHS\n"); return 2; }
    char **lines = read_lines(argv[1], &n_worktrees);
    worktrees = malloc(n_worktrees * sizeof *worktrees);
    indexes = malloc(n_worktrees * sizeof *indexes);
    for (size_t i = 0; i < n_worktrees; i++) {
        char *tab = strchr(lines[i], '\t');
        if (!tab) { fprintf(stderr, "lstat-floor: no tab in line %zu\n", i + 1); return 2; }
        *tab = 0;
        worktrees[i] = lines[i];
        indexes[i] = tab + 1;
    }
    paths = read_lines(argv[2], &n_paths);
    plan();
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    pthread_t threads[64];
    if (cores > 64) cores = 64;
    for (long t = 1; t < cores; t++) pthread_create(&threads[t], NULL, work, NULL);
    work(NULL);
    for (long t = 1; t < cores; t++) pthread_join(threads[t], NULL);
    if (failures) { fprintf(stderr, "lstat-floor: %ld paths could not be stat'ed\n", (long)failures); return 1; }
    return 0;
}
