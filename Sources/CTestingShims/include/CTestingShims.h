// C helpers of the test support library (ScreenTesting); linked into the test binary only.
// Every symbol is prefixed CTestingShims_.
#ifndef CTESTINGSHIMS_H
#define CTESTINGSHIMS_H

#include <spawn.h>

/// The descriptor the test process writes its console to when SCREENPUB_TEST_CONSOLE_FD named a usable
/// one (see CTestingShims.c); -1 otherwise.
int CTestingShims_consoleDescriptor(void);

/// posix_spawn_file_actions_addclosefrom_np, which Swift's Glibc module does not declare.
int CTestingShims_addCloseFrom(posix_spawn_file_actions_t *actions, int from);

#endif
