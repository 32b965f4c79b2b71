#!/usr/bin/env bash
# Builds rayboot's C dependencies from Debian's source packages with musl-gcc into a static
# prefix that every later build reuses: c-ares, nghttp2 (library only), libseccomp, cJSON,
# mbedTLS, libcurl with TLS over it (in OUTDIR/prefix-tls, which both binaries link: Ray's TLS to
# the GCS, the sidecar's Kubernetes API), and for the sidecar alone libmicrohttpd; mbedTLS again
# for glibc (OUTDIR/prefix-unit), for the unit tests.
# Installing host packages and bookworm's deb-src entries is left to scripts/bootstrap.sh; this
# script builds, and fetches the two sources pinned from trixie (fetch_pinned, below) itself.
#
# Usage: deps/build.sh OUTDIR        (OUTDIR/prefix is the result; OUTDIR/.stamp-* mark done steps)
set -euo pipefail

out=$(realpath -m "${1:?usage: deps/build.sh OUTDIR}")
src="$out/src"
prefix="$out/prefix"
prefix_tls="$out/prefix-tls"
kheaders="$out/kernel-headers"
jobs=$(nproc)
mkdir -p "$src" "$prefix/lib" "$prefix/include" "$prefix_tls"

# Hardening for the libraries too: a static binary is only as hardened as what it links.
# _FORTIFY_SOURCE is accepted but inert with musl (it has no fortified headers).
export CC=musl-gcc
export CFLAGS="-O2 -fPIE -fstack-protector-strong -D_FORTIFY_SOURCE=2 -ffunction-sections -fdata-sections"
# The same flags as words, for the two files compiled here directly.
read -ra cflags <<<"$CFLAGS"
# Only the prefix may answer pkg-config queries, so no glibc library can leak into the link.
export PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig"
export PKG_CONFIG_PATH=""

log() { printf 'deps: %s\n' "$*" >&2; }

# fetch PACKAGE: unpack Debian's source package (with Debian's patches) once; prints its dir.
fetch() {
    local pkg=$1 dir
    dir=$(find "$src" -maxdepth 1 -type d -name "$pkg-[0-9]*" | head -n 1)
    if [ -z "$dir" ]; then
        (cd "$src" && apt-get source -qq "$pkg" >/dev/null 2>&1) || {
            log "apt-get source $pkg failed: is a deb-src entry configured? (run scripts/bootstrap.sh)"
            exit 1
        }
        dir=$(find "$src" -maxdepth 1 -type d -name "$pkg-[0-9]*" | head -n 1)
    fi
    printf '%s\n' "$dir"
}

# Two sources come from Debian trixie, each pinned to one version: mbedTLS 3.6 LTS (bookworm's
# 2.28 is out of upstream support) and a libcurl that speaks TLS 1.3 over it (curl 8.8 or later;
# bookworm's 7.88 fails every handshake with 3.6). libcurl is one version for both binaries: lib/
# is compiled once against its headers. Everything else stays bookworm's, through the host's
# deb-src entries. Trixie's entries live in a private apt state under OUTDIR, never in the host's
# sources, so `apt-get source c-ares` there can never pick trixie's c-ares (and lose the patch
# below). apt checks the pinned version against trixie's signed index, dpkg-source the tarballs
# against the .dsc. A pin that the archive no longer serves fails here, by name: choose the
# version trixie has then (`apt-cache showsrc` with the same options) and rebuild.
TRIXIE_CURL=8.14.1-2+deb13u5
TRIXIE_MBEDTLS=3.6.6-0.1~deb13u1
trixie_apt() {
    local cmd=$1 state=$out/apt-trixie; shift
    "$cmd" -q -o Dir::Etc::SourceList="$state/trixie.sources" -o Dir::Etc::SourceParts=/nonexistent \
        -o Dir::State::Lists="$state/lists" -o Dir::Cache="$state/cache" \
        -o Dir::State::status=/dev/null "$@"
}

# fetch_pinned PACKAGE VERSION: unpack trixie's PACKAGE at exactly VERSION once; prints its dir.
fetch_pinned() {
    local pkg=$1 version=$2 state=$out/apt-trixie dir
    dir="$src/$pkg-${version%-*}"
    if [ ! -f "$dir/.rayboot-version" ] || [ "$(cat "$dir/.rayboot-version")" != "$version" ]; then
        rm -rf "$dir"
        mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
        cat > "$state/trixie.sources" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: trixie-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        { trixie_apt apt-get update >&2 && (cd "$src" && trixie_apt apt-get source "$pkg=$version" >&2); } || {
            log "apt-get source $pkg=$version from trixie failed (see above)"
            exit 1
        }
        [ -d "$dir" ] || { log "$pkg=$version unpacked no $dir"; exit 1; }
        printf '%s\n' "$version" > "$dir/.rayboot-version"
    fi
    printf '%s\n' "$dir"
}

# step NAME FUNCTION: run FUNCTION once; a stamp records success so rebuilds are free. The stamp
# holds a hash of this script and of what it adds to mbedTLS: a changed recipe (a configure flag, a patched config header)
# builds every step again, since later steps link what earlier ones made. FUNCTION runs in a
# subshell that is not the left side of || or &&: bash ignores errexit in everything called from
# there, so a failed check or command inside a recipe would not stop it.
here=$(dirname "$(realpath "$0")")
recipe=$(cat "$0" "$here/mbedtls_entropy.c" "$here/mbedtls-tls12-rsa-pss.patch" | sha256sum | cut -d' ' -f1)
step() {
    local name=$1 fn=$2 t0 status
    [ "$(cat "$out/.stamp-$name" 2>/dev/null)" = "$recipe" ] && return 0
    t0=$(date +%s)
    log "building $name"
    set +e
    ( set -e; "$fn" ) > "$out/$name.log" 2>&1
    status=$?
    set -e
    if [ "$status" != 0 ]; then
        log "$name failed; see $out/$name.log"
        tail -n 30 "$out/$name.log" >&2
        exit 1
    fi
    echo "$recipe" > "$out/.stamp-$name"
    log "$name done in $(( $(date +%s) - t0 )) s"
}

cmake_static() {
    local dir=$1; shift
    rm -rf "$dir/_build"
    cmake -S "$dir" -B "$dir/_build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=musl-gcc \
        -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib "$@"
    cmake --build "$dir/_build" -j "$jobs"
    cmake --install "$dir/_build"
}

# c-ares 1.18 embeds two bucket arrays in every channel (ares_private.h): 2,048 list heads by query
# id and 1,024 by timeout second, 72 KiB of pointers that ares_init writes at once, per channel.
# The prober holds about three channels with at most two queries in flight each, so 64 and 32
# buckets serve it as well (a bucket is a list; only its length grows) and save ~200 kB of the
# waiting prober's RSS. The sizes are used only as `% SIZE` (any size is correct). Each define must
# be found exactly once, as shipped or as patched by an earlier run (the tree is unpacked once):
# a changed upstream stops the build here instead of silently keeping the large tables.
CARES_QID_BUCKETS=64
CARES_TIMEOUT_BUCKETS=32
cares_small_tables() {
    local header=$1/src/lib/ares_private.h name from to
    for spec in "ARES_QID_TABLE_SIZE 2048 $CARES_QID_BUCKETS" "ARES_TIMEOUT_TABLE_SIZE 1024 $CARES_TIMEOUT_BUCKETS"; do
        read -r name from to <<< "$spec"
        sed -i "s|^#define $name $from\$|#define $name $to|" "$header"
        if [ "$(grep -c "^#define $name $to\$" "$header")" != 1 ] ||
            [ "$(grep -c "define $name " "$header")" != 1 ]; then
            log "c-ares: $header has no single '#define $name $from' to patch (upstream changed?)"
            return 1
        fi
    done
}

build_cares() {
    local dir
    dir=$(fetch c-ares)
    cares_small_tables "$dir"
    cmake_static "$dir" -DCARES_STATIC=ON -DCARES_SHARED=OFF -DCARES_BUILD_TOOLS=OFF \
        -DCARES_BUILD_TESTS=OFF
}

build_nghttp2() {
    cmake_static "$(fetch nghttp2)" -DENABLE_LIB_ONLY=ON -DENABLE_STATIC_LIB=ON \
        -DENABLE_SHARED_LIB=OFF -DENABLE_DOC=OFF
}

# curl_build BUILDDIR PREFIX TLS_FLAG...: libcurl for HTTP and h2c only, the TLS choice is the
# caller's, configured and built out of Debian's source tree (as Debian builds its own flavours)
# so a rebuild never meets old objects and the tree is never configured in place: cleaning a
# configured curl tree (`make distclean`) takes minutes, tests/libtest's Makefile alone is 95 MB.
# No proxy support on purpose: the GCS and the dashboard are in-cluster, and an http_proxy
# inherited from the pod must never reroute a health check.
curl_build() {
    local build=$1 into=$2 dir; shift 2
    dir=$(fetch_pinned curl "$TRIXIE_CURL")
    rm -rf "$build" && mkdir -p "$build" && cd "$build"
    "$dir/configure" --prefix="$into" --disable-shared --enable-static --with-pic \
        --enable-ares="$prefix" --with-nghttp2="$prefix" "$@" \
        --disable-ftp --disable-file --disable-ldap --disable-ldaps --disable-rtsp \
        --disable-dict --disable-telnet --disable-tftp --disable-pop3 --disable-imap \
        --disable-smb --disable-smtp --disable-gopher --disable-mqtt --disable-manual \
        --disable-ntlm --disable-proxy --disable-cookies --disable-netrc --disable-alt-svc \
        --disable-hsts --disable-unix-sockets --disable-http-auth --disable-mime --disable-form-api \
        --disable-headers-api --disable-ipfs --disable-websockets --disable-doh --disable-aws \
        --disable-bindlocal --disable-get-easy-options --disable-sha512-256 --disable-tls-srp \
        --disable-ssls-export --disable-progress-meter --disable-docs --without-zlib --without-brotli \
        --without-zstd --without-libpsl --without-libidn2 --without-librtmp --without-libssh2 \
        --without-libgsasl --without-ngtcp2 --without-nghttp3 --without-quiche
    # Only libcurl itself: curl 8 also builds a second copy of the library for its unit tests
    # (libcurlu, noinst) whenever it can, which would double the build for nothing.
    make -j "$jobs" -C lib noinst_LTLIBRARIES=
    make -C lib install noinst_LTLIBRARIES=
    make -C include install
}

# The one libcurl, with mbedTLS (Ray's TLS, the Kubernetes API server), into a prefix of its own
# (lib/libcurl.a and include/curl only). No default CA bundle: the caller names its CA. Both
# binaries link it.
build_curl_tls() {
    curl_build "$out/build-curl-tls" "$prefix_tls" --with-mbedtls="$prefix" \
        --without-ca-bundle --without-ca-path
}

MBEDTLS_LEFT_OUT="MBEDTLS_SSL_SRV_C MBEDTLS_SSL_PROTO_DTLS MBEDTLS_SSL_DTLS_ANTI_REPLAY
    MBEDTLS_SSL_DTLS_HELLO_VERIFY MBEDTLS_SSL_DTLS_CLIENT_PORT_REUSE MBEDTLS_SSL_DTLS_CONNECTION_ID
    MBEDTLS_SSL_DTLS_SRTP MBEDTLS_SSL_COOKIE_C MBEDTLS_SSL_CACHE_C MBEDTLS_SSL_TICKET_C MBEDTLS_TIMING_C
    MBEDTLS_SSL_CONTEXT_SERIALIZATION MBEDTLS_KEY_EXCHANGE_PSK_ENABLED MBEDTLS_KEY_EXCHANGE_DHE_PSK_ENABLED
    MBEDTLS_KEY_EXCHANGE_ECDHE_PSK_ENABLED MBEDTLS_KEY_EXCHANGE_RSA_PSK_ENABLED
    MBEDTLS_KEY_EXCHANGE_RSA_ENABLED MBEDTLS_KEY_EXCHANGE_DHE_RSA_ENABLED
    MBEDTLS_KEY_EXCHANGE_ECDH_ECDSA_ENABLED MBEDTLS_KEY_EXCHANGE_ECDH_RSA_ENABLED
    MBEDTLS_KEY_EXCHANGE_ECJPAKE_ENABLED MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_ENABLED
    MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_PSK_EPHEMERAL_ENABLED MBEDTLS_DHM_C MBEDTLS_ECJPAKE_C
    MBEDTLS_CAMELLIA_C MBEDTLS_ARIA_C MBEDTLS_DES_C MBEDTLS_CCM_C MBEDTLS_NIST_KW_C MBEDTLS_RIPEMD160_C
    MBEDTLS_SHA3_C MBEDTLS_LMS_C MBEDTLS_PKCS7_C MBEDTLS_PKCS12_C MBEDTLS_PKCS5_C
    MBEDTLS_X509_CSR_WRITE_C MBEDTLS_X509_CSR_PARSE_C
    MBEDTLS_X509_CRL_PARSE_C MBEDTLS_SELF_TEST MBEDTLS_VERSION_FEATURES MBEDTLS_DEBUG_C MBEDTLS_ERROR_C
    MBEDTLS_PSA_CRYPTO_STORAGE_C MBEDTLS_PSA_ITS_FILE_C MBEDTLS_FS_IO MBEDTLS_NET_C MBEDTLS_GENPRIME
    MBEDTLS_CIPHER_MODE_CFB MBEDTLS_CIPHER_MODE_OFB MBEDTLS_CIPHER_MODE_XTS
    MBEDTLS_ECP_DP_SECP192R1_ENABLED MBEDTLS_ECP_DP_SECP224R1_ENABLED MBEDTLS_ECP_DP_SECP192K1_ENABLED
    MBEDTLS_ECP_DP_SECP224K1_ENABLED MBEDTLS_ECP_DP_SECP256K1_ENABLED MBEDTLS_ECP_DP_BP256R1_ENABLED
    MBEDTLS_ECP_DP_BP384R1_ENABLED MBEDTLS_ECP_DP_BP512R1_ENABLED MBEDTLS_ECP_DP_CURVE448_ENABLED"
# mbedtls_has_upstream_fix DIR: DIR's source carries upstream's fix of Mbed-TLS/mbedtls#10668, read
# from the source itself (the fix's ChangeLog entry, "Fixes #10668", in ChangeLog.d/ before a release
# and in ChangeLog after it; a distribution that backports the commit brings the entry too), not
# from a version number, so a backport is found as well.
mbedtls_has_upstream_fix() {
    grep -rqsF '#10668' "$1/ChangeLog" "$1/ChangeLog.d"
}

# With Ray's TLS each pod makes its own certificate at start (lib/net/tlscert.c): the certificate
# writer and PEM output are put back (an earlier recipe left them out in the same unpacked tree).
MBEDTLS_PUT_BACK="MBEDTLS_X509_CREATE_C MBEDTLS_X509_CRT_WRITE_C MBEDTLS_PEM_WRITE_C"
# mbedtls_configure: unpacks mbedTLS once and sets its configuration, which both builds of it use
# (below); sets mbedtls_dir.
mbedtls_configure() {
    local dir config
    dir=$(fetch_pinned mbedtls "$TRIXIE_MBEDTLS")
    mbedtls_dir=$dir
    config=$dir/include/mbedtls/mbedtls_config.h
    # Upstream's default configuration as shipped in the source package (TLS 1.2 and 1.3 with the
    # PSA crypto core 1.3 needs, ECDHE, RSA and ECDSA certificates, AES-GCM and ChaCha20: what API
    # servers speak), static, without programs or tests. Debian's own additions live in its
    # debian/rules, not in the tree, and are left out here: threading and the rest serve nothing a
    # one-thread TLS client needs. One change, made as debian/rules makes its own (in the tree's
    # config header, so that every user of the headers sees it): entropy from getrandom(2) through
    # mbedtls_hardware_poll (deps/mbedtls_entropy.c, added to libmbedcrypto.a so that every link
    # against it, curl's configure checks included, finds it), not from /dev/urandom, which
    # mbedTLS 3.6 still opens for every connection on any libc but glibc (library/entropy_poll.c).
    # The sidecar's API reader confines itself before it connects, and may then open no file
    # (sidecar/kubeapi.c).
    sed -i -e 's|^//#define MBEDTLS_NO_PLATFORM_ENTROPY$|#define MBEDTLS_NO_PLATFORM_ENTROPY|' \
        -e 's|^//#define MBEDTLS_ENTROPY_HARDWARE_ALT$|#define MBEDTLS_ENTROPY_HARDWARE_ALT|' "$config"
    grep -q '^#define MBEDTLS_ENTROPY_HARDWARE_ALT$' "$config"
    grep -q '^#define MBEDTLS_NO_PLATFORM_ENTROPY$' "$config"
    grep -q '^#define MBEDTLS_SSL_PROTO_TLS1_3$' "$config"
    # mbedTLS 3.6's TLS 1.2 client offers RSA-PSS signatures (its list is TLS 1.3's) and can verify
    # them, but refuses them when a TLS 1.2 server signs with one (OpenSSL does, with an RSA key):
    # Mbed-TLS/mbedtls#10668, fixed upstream in #10672 (backport to 3.6: #10674). A source that has
    # that fix needs the patch no more: stop, rather than patch the fix twice.
    if mbedtls_has_upstream_fix "$dir"; then
        log "mbedTLS: $dir already fixes Mbed-TLS/mbedtls#10668 (its ChangeLog says so): remove" \
            "deps/mbedtls-tls12-rsa-pss.patch and the step that applies it (deps/build.sh), and the" \
            "patch line of rayboot-sidecar --version (sidecar/main.c)"
        return 1
    fi
    # The patch is applied once: the tree is unpacked once.
    if ! grep -q 'RSA-PSS with an rsaEncryption key is a TLS 1.2' "$dir/library/ssl_misc.h"; then
        patch -d "$dir" -p1 < "$here/mbedtls-tls12-rsa-pss.patch"
    fi
    # What a TLS client of an API server never uses is left out (smaller, and nothing that opens
    # a file: PSA's key store, FS_IO): the server side, DTLS, PSK and non-ephemeral key exchanges,
    # ciphers and curves no API server offers, self-tests, error strings.
    local name
    for name in $MBEDTLS_LEFT_OUT; do
        sed -i "s|^#define $name\b|//#define $name|" "$config"
        if grep -q "^#define $name\b" "$config"; then
            log "mbedTLS: could not leave $name out"
            return 1
        fi
    done
    for name in $MBEDTLS_PUT_BACK; do
        sed -i "s|^//#define $name\b|#define $name|" "$config"
        grep -q "^#define $name\b" "$config" || { log "mbedTLS: could not put $name back"; return 1; }
    done
}

build_mbedtls() {
    local dir
    mbedtls_configure
    dir=$mbedtls_dir
    cmake_static "$dir" -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF \
        -DUSE_SHARED_MBEDTLS_LIBRARY=OFF -DUSE_STATIC_MBEDTLS_LIBRARY=ON
    musl-gcc "${cflags[@]}" -std=c11 -Wall -Wextra -Werror -isystem "$prefix/include" \
        -c "$here/mbedtls_entropy.c" -o "$out/mbedtls_entropy.o"
    ar rs "$prefix/lib/libmbedcrypto.a" "$out/mbedtls_entropy.o"
}

# The same mbedTLS, configured the same, built with the host's gcc for glibc into OUTDIR/prefix-unit:
# the unit tier (glibc, sanitizers) tests lib/net/tlscert.c against it. Debian bookworm's
# libmbedtls-dev is 2.28, whose certificate writer has no subjectAltName; nothing else links it.
build_mbedtls_unit() {
    local dir unit=$out/prefix-unit
    mbedtls_configure
    dir=$mbedtls_dir
    rm -rf "$dir/_build_unit" "$unit"
    cmake -S "$dir" -B "$dir/_build_unit" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc \
        -DCMAKE_C_FLAGS="-O2 -fPIC" -DCMAKE_INSTALL_PREFIX="$unit" -DCMAKE_INSTALL_LIBDIR=lib \
        -DENABLE_PROGRAMS=OFF -DENABLE_TESTING=OFF -DUSE_SHARED_MBEDTLS_LIBRARY=OFF \
        -DUSE_STATIC_MBEDTLS_LIBRARY=ON
    cmake --build "$dir/_build_unit" -j "$jobs"
    cmake --install "$dir/_build_unit"
    gcc -O2 -fPIC -std=c11 -Wall -Wextra -Werror -isystem "$unit/include" \
        -c "$here/mbedtls_entropy.c" -o "$out/mbedtls_entropy_unit.o"
    ar rs "$unit/lib/libmbedcrypto.a" "$out/mbedtls_entropy_unit.o"
}

build_microhttpd() {
    local dir
    dir=$(fetch libmicrohttpd)
    cd "$dir"
    if [ -f Makefile ]; then make distclean >/dev/null 2>&1 || true; fi
    # Plain HTTP (probes and preStop hooks come from the kubelet on the pod network), epoll, no
    # authentication or form parsing: the sidecar drives it from its own loop, without threads.
    ./configure --prefix="$prefix" --disable-shared --enable-static --with-pic --disable-https \
        --disable-curl --disable-doc --disable-examples --disable-bauth --disable-dauth \
        --disable-postprocessor --disable-httpupgrade --disable-nls --enable-epoll=yes
    make -j "$jobs" -C src/microhttpd
    make -C src/microhttpd install
    make -C src/include install
}

build_seccomp() {
    local dir
    dir=$(fetch libseccomp)
    # The kernel UAPI headers in a directory of their own: -isystem /usr/include would pull
    # glibc's headers in front of musl's.
    rm -rf "$kheaders" && mkdir -p "$kheaders"
    cp -r /usr/include/linux /usr/include/asm-generic "$kheaders/"
    cp -r "/usr/include/$(gcc -print-multiarch)/asm" "$kheaders/asm"
    cd "$dir"
    if [ -f Makefile ]; then make distclean >/dev/null 2>&1 || true; fi
    CC="musl-gcc -isystem $kheaders" ./configure --prefix="$prefix" --disable-shared \
        --enable-static --with-pic --disable-python
    make -j "$jobs" -C src
    make -C src install
    make -C include install
    make install-pkgconfDATA
}

build_cjson() {
    local dir
    dir=$(fetch cjson)
    musl-gcc "${cflags[@]}" -std=c89 -c "$dir/cJSON.c" -o "$out/cJSON.o"
    ar rcs "$prefix/lib/libcjson.a" "$out/cJSON.o"
    mkdir -p "$prefix/include/cjson"
    cp "$dir/cJSON.h" "$prefix/include/cjson/cJSON.h"
}

command -v musl-gcc >/dev/null || { log "musl-gcc not found (apt-get install musl-tools)"; exit 1; }
command -v gperf >/dev/null || { log "gperf not found (apt-get install gperf)"; exit 1; }

step cares build_cares
step nghttp2 build_nghttp2
step seccomp build_seccomp
step cjson build_cjson
step mbedtls build_mbedtls
step mbedtls-unit build_mbedtls_unit
step curl-tls build_curl_tls
step microhttpd build_microhttpd
touch "$out/.stamp-all"
log "prefix ready: $prefix (and $prefix_tls for libcurl)"
