#!/usr/bin/env bash
# Runs a command on a fresh machine of this kind, made on this one: a Debian root of its own
# (debootstrap), holding only what such a machine starts with (Node.js and npm as this machine
# has them, python3, make and g++), and a clean clone of this repository. What the command
# installs (Debian packages, npm dependencies, model files) it installs there, from nothing. It
# shares this machine's kernel, cores and network: a fresh install, not other hardware.
#
#   sudo bash ops/fresh-root.sh DIR [command...]     # by default `CI=true bash .ci/run`
#
# DIR is made if missing and kept afterwards (delete it with `rm -rf`, once nothing is mounted
# under it). The clone sits at DIR/work/repo and the model and media mirror named by
# ASSETS_MIRROR, if any, is copied beside it as DIR/work/shared. Must run as root.
set -euo pipefail
root=${1:?usage: fresh-root.sh DIR [command...]}
shift
command=("$@")
((${#command[@]})) || command=(bash -c 'CI=true bash .ci/run')
repo=$(cd "$(dirname "$0")/.." && pwd)
root=$(mkdir -p "$root" && cd "$root" && pwd)

if [[ ! -x "$root/usr/bin/apt-get" ]]; then
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Node.js, its headers (for native addons) and npm as this machine has them: not in Debian's
# archive at this version.
tar -cf - /usr/bin/node /usr/bin/npm /usr/bin/npx /usr/lib/node_modules /usr/include/node 2>/dev/null | tar -xf - -C "$root"
[[ -f /root/.npmrc ]] && cp /root/.npmrc "$root/root/.npmrc"
if [[ ! -x "$root/usr/bin/git" ]]; then
  chroot "$root" apt-get update -q
  chroot "$root" apt-get install -y -q --no-install-recommends ca-certificates git python3 make g++ procps iproute2
fi
# The certificate authorities this machine trusts beyond Debian's (a proxy's, say), and the
# variables that point programs at them.
cp -a /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
chroot "$root" update-ca-certificates >/dev/null
passed_env=()
for name in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR GIT_SSL_CAINFO CURL_CA_BUNDLE; do
  [[ -n ${!name:-} ]] && passed_env+=("$name=${!name}")
done

mounted=()
mount_in() { mkdir -p "$root$2"; mount "${@:3}" "$1" "$root$2"; mounted=("$root$2" "${mounted[@]}"); }
unmount_all() { for point in "${mounted[@]}"; do umount -l "$point" 2>/dev/null || true; done; }
trap unmount_all EXIT
mount_in proc /proc -t proc
mount_in /sys /sys --rbind
mount_in /dev /dev --rbind
mount_in tmpfs /tmp -t tmpfs

rm -rf "$root/work/repo"
mkdir -p "$root/work"
git clone -q "$repo" "$root/work/repo"
if [[ -n ${ASSETS_MIRROR:-} ]]; then
  mkdir -p "$root/work/shared"
  IFS=: read -ra mirrors <<<"$ASSETS_MIRROR"
  for mirror in "${mirrors[@]}"; do cp -a "$mirror" "$root/work/shared/"; done
fi
chroot "$root" env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb "${passed_env[@]}" \
  bash -c 'cd /work/repo && "$@"' bash "${command[@]}"
