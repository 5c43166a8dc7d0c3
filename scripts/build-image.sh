#!/usr/bin/env bash
# Builds the server image from the Dockerfile: `npm run image` tags kube-admission-server:<version
# of package.json> (IMAGE=name:tag to choose another); extra arguments go to `docker build`.
# With the legacy builder (DOCKER_BUILDKIT=0): BuildKit fetches its Dockerfile frontend from an
# image registry, which the machines here cannot reach. --network host because the engine runs
# without a bridge (scripts/docker-engine.sh) and `npm ci` in the build stage needs the registry.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(node -p "require('./package.json').version")
image=${IMAGE:-kube-admission-server:$version}
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
if [ "$revision" != unknown ] && [ -n "$(git status --porcelain -- src policies package.json package-lock.json Dockerfile 2>/dev/null)" ]; then
  revision="$revision-dirty"
fi

DOCKER_BUILDKIT=0 docker build --network host \
  --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
  --tag "$image" "$@" .
