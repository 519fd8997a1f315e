#!/usr/bin/env bash
# Builds the small image the Docker sandbox tests run in, without any registry: a rootfs
# made from this machine's files (busybox-static for the usual commands; the host's bash,
# GNU find and git when there are, with the libraries ldd says they need), imported with
# `docker import`. Takes a second or two; does nothing when the image already exists.
# Usage: docker-test-image.sh [IMAGE]   (default $WRIGHT_DOCKER_TEST_IMAGE, else
# wright-sandbox-test:latest). With WRIGHT_DOCKER_TEST_NO_GIT=1 the image has no git.
set -euo pipefail
image="${1:-${WRIGHT_DOCKER_TEST_IMAGE:-wright-sandbox-test:latest}}"

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "docker-test-image: $image already exists"
  exit 0
fi
busybox="$(command -v busybox || true)"
if [ -z "$busybox" ] || ! "$busybox" --list >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "docker-test-image: busybox is missing: apt-get install busybox-static" >&2
    exit 1
  fi
  apt-get install -y -q busybox-static >/dev/null
  busybox="$(command -v busybox)"
fi
bash_bin="$(readlink -f "$(command -v bash)")"

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,etc,tmp,proc,sys,dev,home,root,workspace}
chmod 1777 "$root/tmp"
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [ "$applet" = busybox ] || [ "$applet" = bash ] || ln -sf busybox "$root/bin/$applet"
done
programs=("$bash_bin")
cp "$bash_bin" "$root/bin/bash"
# GNU find, where there is one: the copied workspace's sync lists changes to the second
# with it (busybox's find does minutes).
if find_bin="$(readlink -f "$(command -v find)")" && "$find_bin" --version 2>/dev/null | grep -q GNU; then
  mkdir -p "$root/usr/bin"
  cp "$find_bin" "$root/usr/bin/find"
  programs+=("$find_bin")
fi
if [ "${WRIGHT_DOCKER_TEST_NO_GIT:-}" != 1 ] && git_bin="$(command -v git)"; then
  git_bin="$(readlink -f "$git_bin")"
  cp "$git_bin" "$root/bin/git"
  # git runs its own subcommands (gc --auto, …) from its exec path.
  mkdir -p "$root/usr/lib/git-core"
  ln -s /bin/git "$root/usr/lib/git-core/git"
  programs+=("$git_bin")
fi
# The loader and libraries the programs link against, at the same paths as on the host.
for lib in $(ldd "${programs[@]}" | grep -o '/[^ ]*' | sort -u); do
  [ -e "$lib" ] || continue
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
printf 'root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'CMD ["/bin/bash"]' \
  - "$image" >/dev/null
echo "docker-test-image: built $image ($(du -sh "$root" | cut -f1))"
