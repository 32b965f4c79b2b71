#!/usr/bin/env bash
# Installs what building and testing rayboot needs on a fresh Debian bookworm machine, and
# nothing when it is all there already: Debian packages, and deb-src entries for deps/build.sh.
# The Ray virtualenv is scripts/ray-venv.sh's job.
#
# Usage: scripts/bootstrap.sh [--build-only]   (--build-only: what `make all` needs, for the
#                                               Dockerfile's builder)
set -euo pipefail

build_packages=(musl-tools gperf cmake make gcc g++ pkg-config dpkg-dev file binutils)  # g++: nghttp2's CMake project names C++
packages=(
    "${build_packages[@]}"                                             # release build
    libcmocka-dev libcjson-dev libcurl4-openssl-dev libc-ares-dev libseccomp-dev libmicrohttpd-dev  # unit tests
    openssl                                                            # test CA for the sidecar
    clang clang-tidy clang-format cppcheck shellcheck valgrind         # make lint, make fuzz, make unit-valgrind
    libclang-rt-dev                                                    # libFuzzer for make fuzz (clang only recommends it)
    dnsmasq-base iproute2 util-linux nftables procps curl              # pod simulator
    redis-server                                                       # GCS fault tolerance tests (its external store)
    etcd-server containerd runc containernetworking-plugins iptables conntrack ipset  # the real node
    buildah mmdebstrap                                                 # its images
)

say() { printf 'bootstrap: %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
    say "needs root (apt-get, network namespaces); run it as root or with sudo"
    exit 1
fi

if [ "${1:-}" = "--build-only" ]; then
    packages=("${build_packages[@]}")
elif [ $# -gt 0 ]; then
    say "unknown argument $1 (usage: scripts/bootstrap.sh [--build-only])"
    exit 2
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

src_list=/etc/apt/sources.list.d/rayboot-deb-src.sources
need_update=0
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    # deps/build.sh builds the C dependencies from Debian's own source packages.
    say "adding deb-src entries ($src_list)"
    # Debian's images keep their sources in deb822 form; a system made by debootstrap or
    # mmdebstrap has only a one-line sources.list, and then the entries below are used.
    : > "$src_list"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed -n '/^Types: deb$/,/^$/p' /etc/apt/sources.list.d/debian.sources |
            sed 's/^Types: deb$/Types: deb-src/' > "$src_list"
    fi
    if [ ! -s "$src_list" ]; then
        cat > "$src_list" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    fi
    need_update=1
fi
[ ${#missing[@]} -gt 0 ] && need_update=1
if [ "$need_update" -eq 1 ]; then
    say "apt-get update"
    apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
say "host ready"
