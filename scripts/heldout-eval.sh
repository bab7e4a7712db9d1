#!/usr/bin/env bash
# Evaluates a learned model against FGD and the offline allocation bound on openb pod lists, one
# `greensched bound` run per list, and prints a Markdown table (the README's held-out table) with
# the mean over the lists in the last row.
#
#   scripts/heldout-eval.sh MODEL.json LIST...       LIST: a pod-list name, e.g. gpushare40
#
# Environment: OPENB (folder of the openb CSVs, default ../shared/data/openb), SEEDS (default
# 42-51, the evaluation seeds no shipped model was trained on), GREENSCHED (the binary, default
# build/greensched), JOBS (parallel runs, default all cores).
set -euo pipefail

if [[ $# -lt 2 ]]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
model=$1
shift
openb=${OPENB:-../shared/data/openb}
seeds=${SEEDS:-42-51}
bin=${GREENSCHED:-build/greensched}
jobs=${JOBS:-0}
nodes="$openb/openb_node_list_gpu_node.csv"
[[ -x $bin ]] || { echo "error: $bin not found; run make build first or set GREENSCHED" >&2; exit 1; }
[[ -f $nodes ]] || { echo "error: $nodes not found; set OPENB or run scripts/fetch-openb.sh" >&2; exit 1; }
[[ -f $model ]] || { echo "error: model $model not found" >&2; exit 1; }

echo "| pod list | FGD alloc % | learned alloc % | gain (points) | FGD unallocated GPUs | learned unallocated GPUs | FGD power kW | learned power kW | bound % |"
echo "|---|---|---|---|---|---|---|---|---|"
for list in "$@"; do
  pods="$openb/openb_pod_list_$list.csv"
  [[ -f $pods ]] || { echo "error: $pods not found" >&2; exit 1; }
  echo "evaluating $list (seeds $seeds)" >&2
  # Text output: "policy alloc@100 unalloc power_kW gap" rows, then "bound alloc unalloc".
  "$bin" bound --nodes "$nodes" --pods "$pods" --seeds "$seeds" -j "$jobs" -q \
    --policy "fgd,learned:$model" |
    awk -v list="$list" '
      $1 == "fgd" { fa = $2; fu = $3; fp = $4 }
      $1 ~ /^learned/ { la = $2; lu = $3; lp = $4 }
      $1 == "bound" { b = $2 }
      END {
        if (fa == "" || la == "" || b == "") { print "error: no figures for " list > "/dev/stderr"; exit 1 }
        printf "| %s | %.2f | %.2f | %+.2f | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
               list, fa, la, la - fa, fu, lu, fp, lp, b
      }'
done | awk -F'|' '
  { print; n++; for (i = 3; i <= 10; i++) s[i] += $i }
  END {
    if (n == 0) exit 1
    printf "| **mean of %d** | %.2f | %.2f | **%+.2f** | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
           n, s[3] / n, s[4] / n, s[5] / n, s[6] / n, s[7] / n, s[8] / n, s[9] / n, s[10] / n
  }'
