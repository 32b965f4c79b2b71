/* Why a pod is ending, read from its Pod object as the Kubernetes API returns it: the
 * DisruptionTarget condition the eviction paths set (PreemptionByScheduler,
 * EvictionByEvictionAPI, TerminationByKubelet, DeletionByTaintManager, ...) or Kueue's
 * TerminationTarget (WorkloadEvictedDueToPreempted, ...), else a plain deletion
 * (metadata.deletionTimestamp). Pure, so it can be unit-tested and fuzzed. */
#ifndef RAYBOOT_SIDECAR_PODREASON_H
#define RAYBOOT_SIDECAR_PODREASON_H

#include <stdbool.h>
#include <stddef.h>

#include "errbuf.h"

/* A Pod object is a few KB; managed fields and big annotations rarely pass 256 KB. */
#define PODREASON_POD_MAX_BYTES (1024 * 1024)
#define PODREASON_TEXT_MAX_BYTES 256

struct pod_reason {
    char reason[64];                        /* e.g. "EvictionByEvictionAPI"; "" when none */
    char message[PODREASON_TEXT_MAX_BYTES]; /* the condition's message, cut */
    char deleted_at[40];                    /* metadata.deletionTimestamp, or "" */
    bool disrupted;                         /* a DisruptionTarget (or TerminationTarget) with status True */
};

/* Parses a Pod's JSON (len bytes, no NUL needed). -1 with a message when it is not a Pod. */
int podreason_parse(const char *json, size_t len, struct pod_reason *out, struct errbuf *err);

/* One line for logs, DrainNode and the termination log: "EvictionByEvictionAPI: Eviction API:
 * evicting", "deleted at 2026-...", or "reason unknown". */
void podreason_describe(const struct pod_reason *r, char *out, size_t cap);

/* The pod is going: it is being deleted (a deletionTimestamp), or the kubelet is ending it without
 * a deletion (a node-pressure eviction, a node shutdown: DisruptionTarget True, TerminationByKubelet).
 * Only then does the sidecar drain on /drain (sidecar/guard.c). */
bool podreason_going(const struct pod_reason *r);

#endif
