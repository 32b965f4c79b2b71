#!/usr/bin/env bash
# The real single-node Kubernetes the tests run on (tests/node/cluster.py says what it is), by hand:
#
#   scripts/k8s-node.sh up       install its packages, build what is missing, start it, wait Ready
#   scripts/k8s-node.sh down     stop it; nothing is left running, mounted or linked
#   scripts/k8s-node.sh status   is it up
#   scripts/k8s-node.sh env      `eval "$(scripts/k8s-node.sh env)"` points kubectl at it
#                                (build/node/bin/kubectl is built alongside the node)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
    up)
        scripts/bootstrap.sh
        tests/node/build.sh
        tests/node/images.sh
        exec python3 tests/node/cluster.py up ;;
    down | status | env)
        exec python3 tests/node/cluster.py "$1" ;;
    *)
        echo "usage: scripts/k8s-node.sh up|down|status|env" >&2
        exit 2 ;;
esac
