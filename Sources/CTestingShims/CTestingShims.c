#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <unistd.h>
#include "CTestingShims.h"

// `swift test` relays the test process's standard output and error through pipes, and on a loaded machine it
// loses lines, the run's closing summary among them. `make test` passes its own standard output as descriptor
// 3 and names it in SCREENPUB_TEST_CONSOLE_FD: this constructor, run when the test binary loads (before
// Swift Testing prints anything), points standard output and error straight at it, so every line of the run
// reaches the log in the order it was written. Without the variable nothing changes.
static int consoleDescriptor = -1;

int CTestingShims_consoleDescriptor(void) { return consoleDescriptor; }

__attribute__((constructor)) static void CTestingShims_redirectConsole(void) {
    const char *named = getenv("SCREENPUB_TEST_CONSOLE_FD");
    if (named == NULL || *named == '\0') return;
    char *end = NULL;
    long descriptor = strtol(named, &end, 10);
    if (*end != '\0' || descriptor <= 2 || descriptor > 1024 || fcntl((int)descriptor, F_GETFD) == -1) return;
    dup2((int)descriptor, STDOUT_FILENO);
    dup2((int)descriptor, STDERR_FILENO);
    close((int)descriptor);
    consoleDescriptor = (int)descriptor;
}

int CTestingShims_addCloseFrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
