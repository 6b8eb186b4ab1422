/*
 * sigclean.h - what restack created and must remove when a signal kills
 * it: a temporary output (removed with unlink()) or a directory tree (the
 * --archive extraction, removed entry by entry).
 *
 * The paths are copied into a fixed table, so sigclean_run() needs no
 * memory and calls only async-signal-safe functions: cmd/'s handler of
 * SIGINT, SIGTERM and SIGHUP calls it from whichever thread the signal
 * reached, then dies by the signal.  A name is registered while the
 * calling thread blocks those signals and holds the table, from before its
 * creation (sigclean_mkstemp(), sigclean_mkdtemp()) until it is gone, so
 * no signal finds it created but unregistered.  Only the process that
 * registered a path removes it (a forked child killed by the same signal
 * leaves it to its parent).
 */
#ifndef RESTACK_COMMON_SIGCLEAN_H
#define RESTACK_COMMON_SIGCLEAN_H

#include <signal.h>

/* How many paths may be registered at once. */
#define SIGCLEAN_SLOTS 16

/* Fills *set with the signals whose handler calls sigclean_run(). */
void sigclean_signals(sigset_t *set);

/*
 * mkostemp(tmpl, O_CLOEXEC) (mode 0600) with the file registered for
 * removal.  Returns the descriptor and sets *id (> 0), or returns -1 with
 * errno set (ENOSPC: the table is full; ENAMETOOLONG: the name is too
 * long).
 */
int sigclean_mkstemp(char *tmpl, int *id);

/* mkdtemp(tmpl) with the tree registered, setting *id; NULL with errno. */
char *sigclean_mkdtemp(char *tmpl, int *id);

/*
 * Forgets registration id (0, "none", is ignored) once its owner renamed
 * or removed the path.
 */
void sigclean_del(int id);

/*
 * Removes every registered path of this process (async-signal-safe).  The
 * first caller returns when done; a second caller (another thread, another
 * signal) never returns, waiting for the first to end the process.
 */
void sigclean_run(void);

#endif
