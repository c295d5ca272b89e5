#!/usr/bin/env bash
# `npm start`: installs what is missing (Debian packages, npm dependencies, model files) and
# runs the whole service on this machine: NATS, ClickHouse, one actor host and the gateway, and
# a demo stream analysed live (`npm start -- --no-demo` or DEMO=false: without it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ops/setup.sh
node --import tsx ops/assets/setup.ts
# A local service pulls local streams; a deployment decides for itself (default off).
export ALLOW_PRIVATE_STREAM_HOSTS="${ALLOW_PRIVATE_STREAM_HOSTS:-true}"
args=("$@")
[[ "${DEMO:-true}" == "false" ]] && args+=(--no-demo)
exec node --import tsx ops/start.ts "${args[@]}"
