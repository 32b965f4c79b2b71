#!/usr/bin/env bash
# Builds the real-node tier's Go programs from the Go module proxy into build/node/bin:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl
# (k8s.io/kubernetes at K8S_VERSION), CoreDNS (COREDNS_VERSION, with only the plugins the
# node's Corefile uses), the KubeRay operator (KUBERAY_VERSION), whose CRDs, sample RayCluster
# and RBAC are copied from its module into build/node/kuberay, kube-router (KUBE_ROUTER_VERSION),
# whose firewall enforces NetworkPolicy in tests/node/test_network_policy.py, and the
# LeaderWorkerSet (LWS_VERSION) and JobSet (JOBSET_VERSION) controllers, each with its module's
# config/default rendered by kustomize into build/node/NAME/install.yaml (tests/node/controllers.py),
# and Kueue (KUEUE_VERSION) the same way.
# Nothing is rebuilt while the pins, go.mod and go.sum are unchanged.
# Module and build caches live under build/node/go, so `make distclean` takes them too.
#
# Usage: tests/node/build.sh [BUILD_DIR]      (default: build/node)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build/node}
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
# shellcheck source=tests/node/pins.env
. "$here/pins.env"

say() { printf 'node-build: %s\n' "$*" >&2; }

# The pins must be the versions the module files build: one place to read them, checked here.
# check_pin VARIABLE DIR MODULE: tests/node/gomod/DIR/go.mod requires MODULE at $VARIABLE.
check_pin() {
    local version=${!1}
    grep -q "^require $3 $version\$" "$here/gomod/$2/go.mod" || {
        say "pins.env says $1=$version but tests/node/gomod/$2/go.mod does not require it"
        exit 2
    }
}
check_pin K8S_VERSION kubernetes k8s.io/kubernetes
check_pin COREDNS_VERSION coredns github.com/coredns/coredns
check_pin KUBERAY_VERSION kuberay github.com/ray-project/kuberay/ray-operator
check_pin KUBE_ROUTER_VERSION kube-router github.com/cloudnativelabs/kube-router/v2
check_pin LWS_VERSION lws sigs.k8s.io/lws
check_pin JOBSET_VERSION jobset sigs.k8s.io/jobset
check_pin KUEUE_VERSION kueue sigs.k8s.io/kueue
command -v go >/dev/null || { say "needs Go (the machine's toolchain)"; exit 2; }

export GOMODCACHE=$out/go/mod GOCACHE=$out/go/cache GOFLAGS=-modcacherw GOTOOLCHAIN=local CGO_ENABLED=0

# build_module DIR STAMP PACKAGE...: builds PACKAGEs of the module in DIR unless STAMP records
# the same inputs (pins, module files, Go version).
build_module() {
    local dir=$1 stamp=$out/bin/.$2.stamp
    shift 2
    local want
    want=$(cat "$0" "$here/pins.env" "$dir/go.mod" "$dir/go.sum" "$dir"/*.go | sha256sum | cut -d' ' -f1)
    want="$want $(go env GOVERSION)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
        say "$(basename "$dir") is up to date"
        return
    fi
    say "building $* (this takes minutes from a cold cache)"
    local t0=$SECONDS
    (cd "$dir" && go build -trimpath -ldflags="-s -w $ldflags" -o "$out/bin/" "$@")
    echo "$want" > "$stamp"
    say "$(basename "$dir") built in $((SECONDS - t0)) s"
}

# Kubernetes' own build stamps its version into every program (hack/lib/version.sh); without it
# they report v0.0.0-master, which the components' version checks and users' tools would see.
k8s_minor=${K8S_VERSION#v1.}
k8s_minor=${k8s_minor%%.*}
ldflags=
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags="$ldflags -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
    ldflags="$ldflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done
build_module "$here/gomod/kubernetes" kubernetes \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
    k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl
ldflags=
build_module "$here/gomod/coredns" coredns .
# `go build .` names the program after the module's last element.
[ -x "$out/bin/coredns" ] || { say "coredns was not built"; exit 1; }

# The KubeRay operator: the module's root package is its main, built as bin/ray-operator.
build_module "$here/gomod/kuberay" kuberay github.com/ray-project/kuberay/ray-operator
[ -x "$out/bin/ray-operator" ] || { say "the KubeRay operator was not built"; exit 1; }
# What the tests install from the module (tests/node/kuberay.py): its CRDs, its sample RayCluster
# and the RBAC its kustomize config grants the operator.
kuberay_src=$(cd "$here/gomod/kuberay" && go list -m -f '{{.Dir}}' github.com/ray-project/kuberay/ray-operator)
rm -rf "$out/kuberay"
mkdir -p "$out/kuberay/crd" "$out/kuberay/rbac"
for crd in rayclusters rayjobs rayservices; do
    cp "$kuberay_src/config/crd/bases/ray.io_$crd.yaml" "$out/kuberay/crd/"
done
cp "$kuberay_src/config/samples/ray-cluster.sample.yaml" "$out/kuberay/"
cp "$kuberay_src"/config/rbac/*.yaml "$out/kuberay/rbac/"
chmod -R u+w "$out/kuberay"

# kube-router: only its NetworkPolicy firewall runs (tests/node/netpol.py says why this one).
build_module "$here/gomod/kube-router" kube-router github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
[ -x "$out/bin/kube-router" ] || { say "kube-router was not built"; exit 1; }

# install_config NAME MODULE: what the module's own kustomize config/default installs (CRDs, RBAC,
# webhook configurations, the webhook certificate's Secret, its Service), rendered by the node's
# kubectl into build/node/NAME/install.yaml; tests/node/controllers.py takes from it what a node
# process needs.
install_config() {
    local name=$1 module=$2 src
    src=$(cd "$here/gomod/$name" && go list -m -f '{{.Dir}}' "$module")
    rm -rf "${out:?}/$name"
    mkdir -p "$out/$name"
    "$out/bin/kubectl" kustomize "$src/config/default" > "$out/$name/install.yaml"
}

# LeaderWorkerSet: its main package is cmd/, which `go build` would name "cmd".
build_module "$here/gomod/lws" lws sigs.k8s.io/lws/cmd
if [ -x "$out/bin/cmd" ]; then mv "$out/bin/cmd" "$out/bin/lws-controller"; fi
[ -x "$out/bin/lws-controller" ] || { say "the LeaderWorkerSet controller was not built"; exit 1; }
install_config lws sigs.k8s.io/lws
# JobSet: the module's root package is its main, built as bin/jobset.
build_module "$here/gomod/jobset" jobset sigs.k8s.io/jobset
[ -x "$out/bin/jobset" ] || { say "the JobSet controller was not built"; exit 1; }
install_config jobset sigs.k8s.io/jobset
# Kueue: its main package is cmd/kueue, built as bin/kueue. It shares few packages with the
# others (its k8s.io and controller-runtime versions are its own): about 330 CPU-seconds of the
# node's background build from a cold cache (docs/testing.md).
build_module "$here/gomod/kueue" kueue sigs.k8s.io/kueue/cmd/kueue
[ -x "$out/bin/kueue" ] || { say "the Kueue controller was not built"; exit 1; }
install_config kueue sigs.k8s.io/kueue
