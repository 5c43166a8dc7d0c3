#!/usr/bin/env bash
# Prints where the npm on PATH is installed (its package folder) and the global config file that
# npm reads when run by the node it was installed with. `npm root -g` and `npm config get
# globalconfig` follow whichever node is first on PATH instead, and a Node from the npm registry
# (.node26, as the README puts first on PATH) brings no npm of its own: they name folders that
# do not exist.
set -euo pipefail

npm_cli=$(readlink -f "$(command -v npm)")
npm_dir=$(dirname "$(dirname "$npm_cli")")
# npm's global prefix is two levels above lib/node_modules; the global config is etc/npmrc in it.
prefix=$(dirname "$(dirname "$(dirname "$npm_dir")")")
echo "$npm_dir"
echo "$prefix/etc/npmrc"
