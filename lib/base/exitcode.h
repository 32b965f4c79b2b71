/* Exit codes both programs use; documented in docs/configuration.md ("Exit codes"). */
#ifndef RAYBOOT_EXITCODE_H
#define RAYBOOT_EXITCODE_H

#define EXIT_OK 0
#define EXIT_JOB_FAILED 1     /* submitter: the Ray job FAILED */
#define EXIT_CONFIG 2         /* usage or configuration error; the message names the culprit */
#define EXIT_JOB_STOPPED 3    /* submitter: the Ray job was STOPPED (or stopped by us on SIGTERM) */
#define EXIT_WAIT_DEADLINE 75 /* EX_TEMPFAIL: a wait's deadline passed */
#define EXIT_CANT_CREATE 73   /* EX_CANTCREAT: `rayboot install` could not write into its directory */
#define EXIT_SOFTWARE 70      /* EX_SOFTWARE: rayboot itself failed (its prober died, a syscall failed) */
#define EXIT_CANNOT_EXEC 126  /* the command exists but could not be executed */
#define EXIT_NOT_FOUND 127    /* the command was not found */
#define EXIT_SIGNAL_BASE 128  /* 128+N: signal N ended the child */

#endif
