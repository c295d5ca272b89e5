#!/usr/bin/env bash
# `npm test` and `npm run test:cluster` (--cluster): install what is missing (Debian packages,
# npm dependencies, model files and test media), and run the tests against real NATS,
# ClickHouse and ffmpeg, the project's type check beside them (ops/test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
# The cluster stage (--cluster) also needs ZooKeeper for its ClickHouse clusters.
setup=(--test)
[[ " $* " == *" --cluster "* ]] && setup+=(--cluster)
bash ops/setup.sh "${setup[@]}"
node --import tsx ops/assets/setup.ts --media
exec node --import tsx ops/test.ts --type-check "$@"
