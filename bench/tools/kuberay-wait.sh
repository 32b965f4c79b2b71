#!/bin/bash
# The baseline: how a KubeRay worker waits for its head. KubeRay's `wait-gcs-ready` init container
# runs `ray health-check --address <fqdn>:<port>` in a loop with `sleep 5`; when it succeeds the
# worker container starts `ray start`. Here both run in one process tree, so the container start
# the kubelet adds in between (hundreds of ms in a real cluster) is not counted against it.
#   $1 = the head's GCS address (fqdn:port); the rest = `ray start` arguments.
# BENCH_RAY is the `ray` that starts the node (the benchmark's recording stand-in).
set -u
address=$1
shift
until ray health-check --address "$address" >/dev/null 2>&1; do
    sleep 5
done
exec "$BENCH_RAY" start --address="$address" "$@"
