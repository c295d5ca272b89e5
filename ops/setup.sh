#!/usr/bin/env bash
# Installs what the service and its tests need, and is quick when it is all there:
# Debian packages (as root, via apt-get) and the npm dependencies. Run by start.sh (no flag: adds
# what its demo stream needs), cluster.sh (--cluster: adds ZooKeeper) and test.sh (--test:
# everything the tests use; the cluster stage adds --cluster).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tests=false cluster=false
for flag in "$@"; do
  case $flag in
    --test) tests=true ;;
    --cluster) cluster=true ;;
    *) echo "usage: ops/setup.sh [--test] [--cluster]" >&2; exit 2 ;;
  esac
done

packages=(nats-server clickhouse-server clickhouse-client ffmpeg gcc libc6-dev)
if [[ $tests == true || $cluster == false ]]; then
  # `npm start`'s demo stream (ops/demo/): a local RTMP server (nginx, its rtmp module, and the
  # stream module and openssl for its RTMPS port) and a synthetic voice. The tests use them too.
  packages+=(nginx libnginx-mod-rtmp libnginx-mod-stream openssl espeak-ng)
fi
if [[ $cluster == true ]]; then
  # ZooKeeper coordinates a ClickHouse cluster (`npm run cluster`, and the tests' clusters); its
  # package brings the Java runtime it runs on. `npm test` starts no cluster: it goes without.
  packages+=(zookeeper)
fi
if [[ $tests == true ]]; then
  # An RTSP server, resampling and noise for the integration tests and benchmarks; a browser
  # for the dashboard's tests.
  packages+=(gir1.2-gst-rtsp-server-1.0 python3-gi
    gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad gstreamer1.0-libav sox chromium)
  # The runner removes the packet filters a killed run left (the shard-loss test cuts a
  # ClickHouse shard off with them).
  packages+=(iptables)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})) && [[ $(id -u) -ne 0 ]]; then
  echo "missing Debian packages: ${missing[*]} (run as root, or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi

# npm dependencies, the lab's (ops/bench, a workspace) with them: reinstalled only when a
# package.json or the lock file changed. They need none of the Debian packages, so on a new
# machine they install while apt-get does (the two took 17-37 s and 46-78 s one after the other).
stamp=node_modules/.install-stamp
want=$(cat package.json ops/bench/package.json package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1)
npm_install=
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  echo "installing npm dependencies"
  # onnxruntime-node ships its CPU binary; its install script would try to download GPU extras.
  ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm ci --no-audit --no-fund --loglevel=error &
  npm_install=$!
  # A failed apt-get ends this script: the install beside it goes with it.
  trap 'kill "$npm_install" 2>/dev/null || true' EXIT
fi

if ((${#missing[@]})); then
  echo "installing Debian packages: ${missing[*]}"
  apt-get update -q >/dev/null
  # The packaged services must not start through init scripts: the project starts its own.
  # Without the packages they merely recommend (printing, desktop services, fonts beyond the
  # base system's, video drivers): a third fewer packages to fetch and unpack.
  DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ -n $npm_install ]]; then
  wait "$npm_install"
  trap - EXIT
  echo "$want" >"$stamp"
fi

# The egress guard loaded into ffmpeg (actors/egress/guard.c): rebuilt when its source changed.
guard_source=actors/egress/guard.c
guard=${EGRESS_GUARD_LIBRARY:-${VAR_DIR:-var}/lib/egress-guard.so}
if [[ ! -f $guard || $guard_source -nt $guard ]]; then
  echo "building the egress guard $guard"
  mkdir -p "$(dirname "$guard")"
  cc -O2 -Wall -Wextra -Werror -shared -fPIC -o "$guard.tmp" "$guard_source" -ldl
  mv "$guard.tmp" "$guard"
fi
