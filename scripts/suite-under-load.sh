#!/usr/bin/env bash
# The whole suite (`npm test`, as the README gives it) several times in a row while another
# process keeps one core busy, as a laptop or a shared CI runner always has: a test that passes
# only on an idle machine is a defect. Prints one line per run (tap's summary and the wall time)
# and ends with `N of M runs green`; exits non-zero when any run failed.
#
#   bash scripts/suite-under-load.sh [runs, default 3]
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
log_dir=$(mktemp -d)

node -e 'for (;;) {}' &
busy_pid=$!
trap 'kill "$busy_pid" 2>/dev/null' EXIT
echo "one core kept busy by pid $busy_pid (node -e 'for (;;) {}'); $(nproc) cores; logs in $log_dir"

green=0
for run in $(seq 1 "$runs"); do
  started=$(date +%s)
  npm test >"$log_dir/run-$run.tap" 2>&1
  rc=$?
  summary=$(grep -E '^# \{ total: [0-9]+' "$log_dir/run-$run.tap" | tail -1)
  echo "run $run: exit $rc, ${summary:-no tap summary}, $(($(date +%s) - started)) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "$rc" -eq 0 ] && [[ "$summary" != *fail* ]] && [ -n "$summary" ]; then
    green=$((green + 1))
  else
    grep -E '^\s*not ok ' "$log_dir/run-$run.tap" | head -20
  fi
done

echo "$green of $runs runs green"
[ "$green" -eq "$runs" ]
