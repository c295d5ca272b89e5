#!/usr/bin/env bash
# `npm run cluster`: installs what is missing (Debian packages with ZooKeeper, npm dependencies,
# model files) and runs the whole service as a small cluster on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ops/setup.sh --cluster
node --import tsx ops/assets/setup.ts
# A local cluster pulls local streams; a deployment decides for itself (default off).
export ALLOW_PRIVATE_STREAM_HOSTS="${ALLOW_PRIVATE_STREAM_HOSTS:-true}"
exec node --import tsx ops/cluster.ts
