#!/usr/bin/env bash
# `npm test`: installs what is missing (Debian packages, npm dependencies, model files and
# test media), type-checks, and runs every test against real NATS, ClickHouse and ffmpeg.
set -euo pipefail
cd "$(dirname "$0")/.."
bash ops/setup.sh --test
node --import tsx ops/assets/setup.ts --media
npx tsc --noEmit -p .
exec node --import tsx ops/test.ts "$@"
