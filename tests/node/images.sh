#!/usr/bin/env bash
# Builds, offline but for Debian's and PyPI's packages, the images the real node runs, from the
# Dockerfiles we ship, with buildah (Debian's), and writes each as an OCI archive under
# build/node/images/ for tests/node/cluster.py to import into containerd:
#
#   debian      IMAGE_DEBIAN: a bookworm root filesystem made by mmdebstrap. The top-level
#               Dockerfile's builder stage says `FROM debian:bookworm`; there is no registry to
#               pull it from, so this is that image, made locally.
#   pause       IMAGE_PAUSE: tests/node/images/pause.c, static, the pod sandbox.
#   rayboot     IMAGE_RAYBOOT: the top-level Dockerfile (builder stage on `debian`, FROM scratch).
#   ray-stock   IMAGE_RAY_STOCK: a stand-in for rayproject/ray (tests/node/images/ray-standin/).
#   ray         IMAGE_RAY: images/Dockerfile on the stand-in, as a user would build it.
#   redis       IMAGE_REDIS: images/redis/Dockerfile (GCS fault tolerance's Redis) on `debian`.
#
# An image is rebuilt only when its inputs change (a key over them is kept beside its archive).
# buildah's storage is build/node/buildah, so nothing lands in the machine's own.
#
# Usage: tests/node/images.sh [BUILD_DIR]      (default: build/node)
set -euo pipefail
# buildah's overlay storage mounts itself (and each container's merged tree) and leaves those
# mounts behind when it ends: run it in a mount namespace of its own, so they go with the script.
if [ -z "${RAYBOOT_IMAGES_MOUNT_NS:-}" ]; then
    RAYBOOT_IMAGES_MOUNT_NS=1 exec unshare --mount --propagation private -- "$0" "$@"
fi
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/build/node}
mkdir -p "$out/images" "$out/base"
out=$(cd "$out" && pwd)
# shellcheck source=tests/node/pins.env
. "$here/pins.env"
ray_requirement=$(grep -E '^ray(\[[a-z,]+\])?==' "$repo/tests/e2e/requirements.txt")

say() { printf 'node-images: %s\n' "$*" >&2; }
bh() { buildah --root "$out/buildah/root" --runroot "$out/buildah/run" --storage-driver overlay "$@"; }

# key_of FILE...: one hash over the contents of the files and directories named (their paths
# and bytes), so that an edit anywhere in a build's inputs rebuilds it.
key_of() {
    find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
}

# fresh NAME KEY: true when build/node/images/NAME.tar was built from KEY.
fresh() { [ -f "$out/images/$1.tar" ] && [ "$(cat "$out/images/$1.key" 2>/dev/null)" = "$2" ]; }

# export_image NAME IMAGE KEY: writes the archive (the image under its one name) and its key.
# Layers stay uncompressed: the archive only crosses this machine, and gzip would cost minutes.
export_image() {
    rm -f "$out/images/$1.tar"
    bh push --quiet --disable-compression "$2" "oci-archive:$out/images/$1.tar.part:$2" >/dev/null
    mv "$out/images/$1.tar.part" "$out/images/$1.tar"
    echo "$3" > "$out/images/$1.key"
}

# build NAME IMAGE KEY ARGS...: `buildah build` with the arguments given, unless fresh. Builds
# run with the host's network (apt and pip inside the build reach only the registries) and
# chroot isolation (no nested user namespaces needed).
build() {
    local name=$1 image=$2 key=$3
    shift 3
    if fresh "$name" "$key" && bh inspect --type image "$image" >/dev/null 2>&1; then
        say "$name is up to date"
        return
    fi
    say "building $name ($image)"
    local t0=$SECONDS
    bh build --quiet --pull=never --network=host --isolation=chroot --layers=false -t "$image" "$@" >/dev/null
    export_image "$name" "$image" "$key"
    say "$name built in $((SECONDS - t0)) s"
}

# The Debian base: mmdebstrap's tarball, committed as an image.
base_tar=$out/base/debian-$DEBIAN_SUITE.tar
if [ ! -s "$base_tar" ]; then
    say "making a $DEBIAN_SUITE root filesystem with mmdebstrap"
    mmdebstrap --quiet --variant=minbase --include=ca-certificates "$DEBIAN_SUITE" "$base_tar.part" \
        "deb http://deb.debian.org/debian $DEBIAN_SUITE main" \
        "deb http://deb.debian.org/debian $DEBIAN_SUITE-updates main" \
        "deb http://deb.debian.org/debian-security $DEBIAN_SUITE-security main"
    mv "$base_tar.part" "$base_tar"
fi
debian_key=$(key_of "$base_tar")-$DEBIAN_SUITE-$IMAGE_DEBIAN
if fresh debian "$debian_key" && bh inspect --type image "$IMAGE_DEBIAN" >/dev/null 2>&1; then
    say "debian is up to date"
else
    say "committing the $DEBIAN_SUITE root filesystem as $IMAGE_DEBIAN"
    c=$(bh from scratch)
    bh add --quiet "$c" "$base_tar" /
    bh config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$c"
    bh commit --quiet --rm "$c" "$IMAGE_DEBIAN" >/dev/null
    export_image debian "$IMAGE_DEBIAN" "$debian_key"
fi

# The pause image: one static binary.
pause_key=$(key_of "$here/images/pause.c")
if fresh pause "$pause_key" && bh inspect --type image "$IMAGE_PAUSE" >/dev/null 2>&1; then
    say "pause is up to date"
else
    mkdir -p "$out/pause"
    musl-gcc -std=c11 -O2 -Wall -Wextra -Werror -static -s "$here/images/pause.c" -o "$out/pause/pause"
    c=$(bh from scratch)
    bh copy --quiet "$c" "$out/pause/pause" /pause
    bh config --entrypoint '["/pause"]' "$c"
    bh commit --quiet --rm "$c" "$IMAGE_PAUSE" >/dev/null
    export_image pause "$IMAGE_PAUSE" "$pause_key"
fi

# rayboot's own image, from the top-level Dockerfile, on the local Debian base. For a developer's
# loop, RAYBOOT_IMAGE_BINARIES=DIR makes the same final stage from DIR's two static binaries
# (`make all`'s build/bin) instead of compiling the dependencies again inside the build (~15 min);
# `make test` never sets it, so CI always builds the Dockerfile a user builds.
if [ -n "${RAYBOOT_IMAGE_BINARIES:-}" ]; then
    bins=$(cd "$RAYBOOT_IMAGE_BINARIES" && pwd)
    for b in rayboot rayboot-sidecar; do
        file -b "$bins/$b" | grep -Eq 'statically linked|static-pie linked' ||
            { say "RAYBOOT_IMAGE_BINARIES: $bins/$b is not a static binary"; exit 1; }
    done
    rayboot_key=prebuilt-$(key_of "$bins/rayboot" "$bins/rayboot-sidecar")
    if fresh rayboot "$rayboot_key" && bh inspect --type image "$IMAGE_RAYBOOT" >/dev/null 2>&1; then
        say "rayboot is up to date (binaries from $bins)"
    else
        say "making rayboot from the binaries in $bins"
        c=$(bh from scratch)
        bh copy --quiet "$c" "$bins/rayboot" /rayboot
        bh copy --quiet "$c" "$bins/rayboot-sidecar" /rayboot-sidecar
        bh config --entrypoint '["/rayboot"]' "$c"
        bh commit --quiet --rm "$c" "$IMAGE_RAYBOOT" >/dev/null
        export_image rayboot "$IMAGE_RAYBOOT" "$rayboot_key"
    fi
else
    rayboot_key=$(key_of "$repo/Dockerfile" "$repo/.dockerignore" "$repo/Makefile" "$repo/VERSION" \
        "$repo/deps" "$repo/scripts" "$repo/lib" "$repo/init" "$repo/sidecar")-$debian_key
    build rayboot "$IMAGE_RAYBOOT" "$rayboot_key" -f "$repo/Dockerfile" "$repo"
fi

# The stand-in for rayproject/ray, with the Ray the tests pin. Its wheels are downloaded here,
# by the machine's pip (which knows how this machine reaches PyPI), once per pin, and lent to
# the build read-only: the build itself installs offline and keeps no copy of them.
wheels=$out/wheels/$(printf '%s' "$ray_requirement" | tr -c 'A-Za-z0-9.=-' '_')
if [ ! -f "$wheels/.complete" ]; then
    say "downloading $ray_requirement and its dependencies"
    mkdir -p "$wheels"
    python3 -m pip download -q --disable-pip-version-check --only-binary=:all: -d "$wheels" "$ray_requirement"
    touch "$wheels/.complete"
fi
stock_key=$(key_of "$here/images/ray-standin" "$repo/tests/e2e/requirements.txt")-$debian_key
build ray-stock "$IMAGE_RAY_STOCK" "$stock_key" -f "$here/images/ray-standin/Containerfile" \
    --build-arg "RAY_REQUIREMENT=$ray_requirement" -v "$wheels:/wheels:ro" "$here/images/ray-standin"

# images/Dockerfile, as README tells a user to build it.
ray_key=$(key_of "$repo/images/Dockerfile")-$rayboot_key-$stock_key
build ray "$IMAGE_RAY" "$ray_key" -f "$repo/images/Dockerfile" \
    --build-arg "RAYBOOT_IMAGE=$IMAGE_RAYBOOT" --build-arg "RAY_VERSION=${IMAGE_RAY_STOCK##*:}" \
    "$repo/images"
# images/redis/Dockerfile: GCS fault tolerance's Redis, Debian's redis-server on the local base.
redis_key=$(key_of "$repo/images/redis")-$debian_key
build redis "$IMAGE_REDIS" "$redis_key" -f "$repo/images/redis/Dockerfile" "$repo/images/redis"
say "images ready in $out/images"
