#!/usr/bin/env bash
# A running Docker engine for the image test (test/e2e-image.test.ts), on a machine without one:
# Debian's docker.io (dockerd 20.10 and containerd), started in the background. No bridge and no
# iptables rules (containers use --network host; nothing on the machine's network changes), and
# the storage driver dockerd picks (overlay2 where the kernel has it, else vfs). Images and the
# build cache live in /var/lib/docker, so what one run built, the next reuses.
# Idempotent: an engine that already answers is used as it is.
set -euo pipefail

log=${DOCKERD_LOG:-/var/log/kube-admission-server-dockerd.log}

if docker info >/dev/null 2>&1; then
  echo "docker: engine running ($(docker version --format '{{ .Server.Version }}'), storage $(docker info --format '{{ .Driver }}'))"
  exit 0
fi
command -v dockerd >/dev/null || {
  echo "dockerd is missing: apt-get install -y --no-install-recommends docker.io (or run npm run setup as root)" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || { echo "starting dockerd needs root" >&2; exit 1; }

# setsid: the engine outlives this script and the shell that ran it.
setsid dockerd --iptables=false --ip6tables=false --bridge=none >>"$log" 2>&1 </dev/null &
for _ in $(seq 1 120); do
  docker info >/dev/null 2>&1 && break
  sleep 0.5
done
docker info >/dev/null 2>&1 || { echo "dockerd did not answer within 60 s; its log ($log):" >&2; tail -20 "$log" >&2; exit 1; }
echo "docker: engine started ($(docker version --format '{{ .Server.Version }}'), storage $(docker info --format '{{ .Driver }}'), log $log)"
