/* Preloaded (LD_PRELOAD) into a program suite's tests' process where it runs apart from the program
 * (sandbox/runner.py run_suite_apart). Before the runtime's own start: make the process non-dumpable, so that the
 * program, under the same user, can read none of its /proc files (its memory holds the tests' expected values, its
 * stdin their code), then say so on the descriptor JUDGE_READY_FD names: the program starts only after that. What it
 * starts is non-dumpable too. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

__attribute__((constructor)) static void out_of_the_programs_reach(void) {
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        _exit(126);
    /* Said once, by the process the runner started (JUDGE_READY_PID), not by what it starts in turn (bash passes its
     * environment on, this library with it), and where its runtime execs itself in stages (a launcher script, then the
     * interpreter: each exec is dumpable until this runs), only from the last one, JUDGE_READY_EXE. */
    const char *ready = getenv("JUDGE_READY_FD"), *pid = getenv("JUDGE_READY_PID"), *exe = getenv("JUDGE_READY_EXE");
    if (ready == NULL || pid == NULL || atol(pid) != (long)getpid())
        return;
    if (exe != NULL) {
        char self[PATH_MAX];
        ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
        if (length < 0)
            _exit(126);
        self[length] = '\0';
        if (strcmp(self, exe) != 0)
            return;
    }
    if (write(atoi(ready), "r", 1) != 1)
        _exit(126);
}
