#!/usr/bin/env bash
# Regenerates the tables of docs/RESULTS.md: each section runs the greensched command(s) behind
# one table into a work folder, then scripts/results_table.py renders the table from the files
# they wrote and replaces the block between `<!-- results:NAME begin -->` and
# `<!-- results:NAME end -->` in the document. Every flag that changes a number is given
# explicitly, so a table does not move when a default does.
#
#   scripts/reproduce-results.sh [--list] [--jobs N] [--work DIR] [--doc FILE]
#                                [--greensched BIN] [SECTION ...]
#
#   --list            print the sections, the table(s) each writes and its usual run time
#   --jobs N          parallel runs inside each greensched command (default 1)
#   --work DIR        folder for the commands' outputs (default results/, one folder a section)
#   --doc FILE        the document whose blocks are replaced (default docs/RESULTS.md)
#   --greensched BIN  the binary (default $GREENSCHED, else build/greensched)
#   SECTION ...       the sections to run (default: all, in the order of --list)
#
# Data: $GREENSCHED_DATA, else $GREENSCHED_SHARED_DATA, else ../shared/data beside the
# checkout. The same binary and data give the same tables, byte for byte.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

# name|blocks it writes|run time with --jobs 1 on a busy 2-core machine
sections=(
  "repro-fgd|repro-fgd|6 s"
  "pwr|pwr-arrival pwr-weights|26 s"
  "single-cluster-load|single-cluster-load single-cluster-load-proportional|14 min"
  "fleet-load|fleet-load|6.5 min"
  "fleet-slack|fleet-slack|3 min"
  "fleet-preempt|fleet-preempt|3 min"
  "fleet-seasons|fleet-seasons|23 min (both cores)"
  "fleet-foresight|fleet-foresight|9 min (both cores)"
  "fleet-sites|fleet-sites|16 s"
  "energy-sites|energy-sites|45 s"
  "energy-forecasts|energy-forecasts|2 min"
  "energy-seasons|energy-seasons|6.5 min"
  "bound-families|bound-families|80 s"
  "defrag-lists|defrag-lists|4 min"
  "defrag-replay|defrag-replay|1 min"
  "defrag-consolidate|defrag-consolidate|1.5 min"
  "fgd-online|fgd-online|65 s"
  "learned-heldout|learned-heldout|75 s"
  "learned-reverse|learned-reverse|55 s"
)

usage() {
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
}

jobs=1
work=results
doc=docs/RESULTS.md
bin=${GREENSCHED:-build/greensched}
list=0
wanted=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --list) list=1 ;;
    --jobs) jobs=${2:?--jobs needs a number}; shift ;;
    --jobs=*) jobs=${1#*=} ;;
    --work) work=${2:?--work needs a folder}; shift ;;
    --work=*) work=${1#*=} ;;
    --doc) doc=${2:?--doc needs a file}; shift ;;
    --doc=*) doc=${1#*=} ;;
    --greensched) bin=${2:?--greensched needs a file}; shift ;;
    --greensched=*) bin=${1#*=} ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "error: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) wanted+=("$1") ;;
  esac
  shift
done
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "error: --jobs $jobs: not a positive number" >&2; exit 2; }

if [[ $list == 1 ]]; then
  printf '%-22s %-55s %s\n' section "table blocks in $doc" "run time (--jobs 1, 2 cores)"
  for s in "${sections[@]}"; do
    IFS='|' read -r name blocks time <<<"$s"
    printf '%-22s %-55s %s\n' "$name" "$blocks" "$time"
  done
  exit 0
fi

known=()
for s in "${sections[@]}"; do known+=("${s%%|*}"); done
if [[ ${#wanted[@]} -eq 0 ]]; then wanted=("${known[@]}"); fi
for w in "${wanted[@]}"; do
  found=0
  for k in "${known[@]}"; do [[ $w == "$k" ]] && found=1; done
  [[ $found == 1 ]] || { echo "error: unknown section '$w' (see --list)" >&2; exit 2; }
done

data=${GREENSCHED_DATA:-${GREENSCHED_SHARED_DATA:-$repo/../shared/data}}
openb=$data/openb
nodes=$openb/openb_node_list_gpu_node.csv
if [[ ! -f $nodes ]]; then
  echo "error: $nodes not found: set GREENSCHED_DATA to the shared data folder" \
    "(with openb/, carbon/, energy/) or place it at ../shared/data beside the checkout" >&2
  exit 1
fi
[[ -x $bin ]] || { echo "error: greensched binary $bin not found; build it or pass --greensched" >&2; exit 1; }
[[ -f $doc ]] || { echo "error: $doc not found" >&2; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
pods_default=$openb/openb_pod_list_default.csv

# Runs one command, echoing it first (the progress a user sees).
run() {
  local shown=("$@")
  [[ ${shown[0]} == "$bin" ]] && shown[0]=greensched
  echo "  \$ ${shown[*]}" >&2
  "$@"
}

gs() { run "$bin" "$@"; }

pods() { echo "$openb/openb_pod_list_$1.csv"; }

# The FGD paper's figure: every baseline at 100 % arrival, mean of seeds 42-51.
section_repro_fgd() {
  gs simulate --mode inflation --nodes "$nodes" --pods "$pods_default" \
    --policy fgd,bestfit,packing,clustering,dotprod,random --seeds 42-51 --tune 1.3 \
    --gpu-power pwr -q -j "$jobs" --out "$1" >/dev/null
}

# The PWR paper's mix against FGD over the arrival, and over the PWR weight.
section_pwr() {
  gs simulate --mode inflation --nodes "$nodes" --pods "$pods_default" \
    --policy fgd,pwr:1+fgd:999,pwr:50+fgd:950,pwr:100+fgd:900,pwr:200+fgd:800,pwr:500+fgd:500,pwr,random:1+fgd:999,packing:1+fgd:999,bestfit:1+fgd:999 \
    --seeds 42-51 --tune 1.3 --gpu-power pwr -q -j "$jobs" --out "$1" >/dev/null
}

# One cluster replayed at 30-90 % offered load, with and without sleeping nodes.
section_single_cluster_load() {
  gs simulate --mode replay --nodes "$nodes" --pods "$pods_default" --queue backfill \
    --policy fgd,bestfit,pwr,pwr:200+fgd:800,learned:models/learned-default.json,fgd-energy \
    --load 30,50,70,90 --days 14 --warmup-days 1 --seeds 42-46 --power-down-idle off,1800 \
    --wake-delay 300 --gpu-power pwr,proportional --timeline-step 3600 -q -j "$jobs" \
    --out "$1" >/dev/null
}

fleet4=(--fleet examples/fleet-4-regions.json --data-dir "$data" --pods "$pods_default"
  --power-down-idle 1800 --wake-delay 300 --ls-bound 600 --days 14 --warmup-days 1
  --start 2023-01-02 --seeds 42)

# Every dispatch agent at 50, 70 and 90 % fleet load, beside the fleet bound.
section_fleet_load() {
  gs multi "${fleet4[@]}" --load 50,70,90 --slack 12 \
    --agent local,round-robin,least-loaded,lowest-carbon-now,carbon-forecast,green,green-plan \
    --oracle --bound -q -j "$jobs" --out "$1" >/dev/null
}

# Carbon against best-effort delay over the slack, at 70 % fleet load.
section_fleet_slack() {
  gs multi "${fleet4[@]}" --load 70 --slack 0,4,12 --agent local,green,green-plan --bound \
    -q -j "$jobs" --out "$1" >/dev/null
}

# The same with latency-sensitive jobs preempting best-effort ones, and without.
section_fleet_preempt() {
  gs multi "${fleet4[@]}" --load 70 --slack 0,12 --agent local,carbon-forecast,green --bound \
    --preempt-be -q -j "$jobs" --out "$1/preempt" >/dev/null
  gs multi "${fleet4[@]}" --load 70 --slack 0,12 --agent local,carbon-forecast,green --bound \
    -q -j "$jobs" --out "$1/no-preempt" >/dev/null
}

# The fleet at 70 % load over four 14-day windows of 2023, seeds 42-44; the forecasting agents
# also on learned forecasts.
section_fleet_seasons() {
  run python3 scripts/fleet-seasons.py --greensched "$bin" --data-dir "$data" \
    --fleet examples/fleet-4-regions.json --pods "$pods_default" --load 70 --slack 0,4,12 \
    --agent local,green,green-plan --seeds 42,43,44 \
    --windows 2023-01-01,2023-04-01,2023-07-01,2023-10-01 --learned --out "$1" >"$1/table.md"
}

# The same for green-plan with past-only forecasts and with forecasts that see the future.
section_fleet_foresight() {
  run python3 scripts/fleet-seasons.py --greensched "$bin" --data-dir "$data" \
    --fleet examples/fleet-4-regions.json --pods "$pods_default" --load 70 --slack 0,4,12 \
    --agent local,green-plan --oracle --bound-prices --seeds 42,43,44 \
    --windows 2023-01-01,2023-04-01,2023-07-01,2023-10-01 --out "$1" >"$1/table.md"
}

# Where the agents and the bound run the work: each site's allocation, October 2023, seed 42.
section_fleet_sites() {
  gs multi --fleet examples/fleet-4-regions.json --data-dir "$data" --pods "$pods_default" \
    --power-down-idle 1800 --wake-delay 300 --ls-bound 600 --days 14 --warmup-days 1 \
    --start 2023-10-01 --seeds 42 --load 70 --slack 0 --agent local,green,green-plan --bound \
    --bound-schedule -q -j "$jobs" --out "$1" >/dev/null
}

energy4=(--fleet examples/fleet-energy.json --data-dir "$data" --pods "$pods_default"
  --power-down-idle 1800 --wake-delay 300 --ls-bound 600 --days 14 --warmup-days 1 --load 70
  --slack 12 --seeds 42 --carbon-price 100 --mpc-horizon 24 --mpc-forecast-days 7 --no-bound)

# Site energy controllers under three dispatch agents at 70 % fleet load.
section_energy_sites() {
  gs multi "${energy4[@]}" --start 2023-01-02 --agent local,green-cost,green-cost-carbon \
    --energy-controller none,greedy,mpc,oracle --generation-forecast past -q -j "$jobs" \
    --out "$1" >/dev/null
}

# The forecasts an operator may have, cumulatively: past only, + day-ahead prices,
# + a day-ahead weather forecast, + exact weather; and past only and + weather forecast with
# mpc's price and carbon forecasts learned (trained on the sites' series before the window).
forecast_variants=(past prices weather exact past-learned weather-learned)
forecast_flags() {
  case $1 in
    past) echo "--generation-forecast past" ;;
    prices) echo "--day-ahead-prices --generation-forecast past" ;;
    weather) echo "--day-ahead-prices --generation-forecast weather --wind-forecast-error 1 --solar-forecast-error 0.35" ;;
    exact) echo "--day-ahead-prices --generation-forecast exact" ;;
    *-learned) echo "$(forecast_flags "${1%-learned}") --mpc-forecast learned" ;;
  esac
}

section_energy_forecasts() {
  local v
  for v in "${forecast_variants[@]}"; do
    # shellcheck disable=SC2046
    gs multi "${energy4[@]}" --start 2023-01-02 --agent local,green-cost,green-cost-carbon \
      --energy-controller none,mpc,oracle $(forecast_flags "$v") -q -j "$jobs" \
      --out "$1/$v" >/dev/null
  done
}

section_energy_seasons() {
  local w v
  for w in 2023-01-01 2023-04-01 2023-07-01 2023-10-01; do
    for v in "${forecast_variants[@]}"; do
      # shellcheck disable=SC2046
      gs multi "${energy4[@]}" --start "$w" --agent local,green-cost,green-cost-carbon \
        --energy-controller none,mpc,oracle $(forecast_flags "$v") -q -j "$jobs" \
        --out "$1/$w/$v" >/dev/null
    done
  done
}

bound_lists=(default cpu0 cpu037 cpu050 cpu072 cpu100 cpu200 cpu235 cpu250 cpu300
  gpushare20 gpushare40 gpushare60 gpushare80 gpushare100
  multigpu20 multigpu30 multigpu40 multigpu50
  gpuspec05 gpuspec10 gpuspec20 gpuspec25 gpuspec33)

# One `greensched bound --json` into $1; the sections whose tables show no offline packing pass
# --no-packing.
bound() {
  local out=$1
  shift
  gs bound --nodes "$nodes" --seeds 42-51 --tune 1.3 --arrival 100 --json -q -j "$jobs" "$@" >"$out"
  basename "$out" .json >>"$(dirname "$out")/order.txt"
}

# FGD against the offline allocation bound, and the offline packing beside it, on every openb
# pod list.
section_bound_families() {
  local l
  for l in "${bound_lists[@]}"; do bound "$1/$l.json" --pods "$(pods "$l")" --policy fgd; done
}

# FGD with bounded migration at budgets 0 to 5 % on every openb pod list, beside the offline
# packing and the LP bound of the same arrived pods.
section_defrag_lists() {
  local l b
  for l in "${bound_lists[@]}"; do
    for b in 0 0.5 1 2 5; do
      gs simulate --nodes "$nodes" --pods "$(pods "$l")" --policy fgd --seeds 42-51 --tune 1.3 \
        --migrate-budget "$b" --max-moves 4 --json -q -j "$jobs" >"$1/$l-moves-$b.json"
    done
    bound "$1/$l.json" --pods "$(pods "$l")" --policy none
  done
}

# Bounded migration in time replay: fgd-energy with nodes sleeping after 30 idle minutes, at
# 30 to 100 % load, without moves and with a 1 % budget (30-minute checkpoints).
section_defrag_replay() {
  local load b
  for load in 30 50 70 90 100; do
    for b in 0 1; do
      gs simulate --mode replay --load "$load" --days 7 --warmup-days 1 --policy fgd-energy \
        --power-down-idle 1800 --wake-delay 300 --gpu-power pwr --seeds 42-44 \
        --migrate-budget "$b" --max-moves 4 --checkpoint-interval 1800 --json -q -j "$jobs" \
        >"$1/load-$load-moves-$b.json"
    done
  done
}

# Moves that empty nodes so they sleep, beside moves only for pods that fit nowhere.
section_defrag_consolidate() {
  local load b c
  for load in 30 50 70; do
    for b in 0 1 5; do
      for c in "" --consolidate; do
        [[ $b == 0 && -n $c ]] && continue
        gs simulate --mode replay --load "$load" --days 7 --warmup-days 1 --policy fgd-energy \
          --power-down-idle 1800 --wake-delay 300 --gpu-power pwr --seeds 42-44 \
          --migrate-budget "$b" --max-moves 4 --checkpoint-interval 1800 $c --json -q \
          -j "$jobs" >"$1/load-$load-moves-$b${c:+-consolidate}.json"
      done
    done
  done
}

# FGD with its target workload estimated online, on stable and drifting workloads.
section_fgd_online() {
  local l pair first second
  for l in default gpushare40 multigpu30 gpuspec20; do
    bound "$1/$l.json" --pods "$(pods "$l")" --policy fgd,fgd-online=2000,fgd-online=all \
      --no-packing
  done
  for pair in default:gpushare100 gpushare100:default default:multigpu50 default:gpuspec33; do
    first=${pair%%:*}
    second=${pair#*:}
    bound "$1/drift-$first-$second.json" --pods "$(pods "$first"),$(pods "$second")" --drift \
      --drift-at 0.5 --drift-target both --policy fgd,fgd-online=2000,fgd-online=all --no-packing
    bound "$1/drift-$first-$second-first.json" --pods "$(pods "$first"),$(pods "$second")" \
      --drift --drift-at 0.5 --drift-target first --policy fgd --no-packing
  done
}

learned_eval() {
  local out=$1 model=$2 l
  shift 2
  for l in "$@"; do
    bound "$out/$l.json" --pods "$(pods "$l")" --policy "fgd,learned:$model" --no-packing
  done
}

# The shipped learned model on the pod lists it was not trained on, and the reverse model.
section_learned_heldout() {
  learned_eval "$1" models/learned-default.json gpushare20 gpushare40 gpushare60 gpushare80 \
    gpushare100 multigpu20 multigpu30 multigpu40 multigpu50 gpuspec05 gpuspec10 gpuspec20 \
    gpuspec25 gpuspec33
}

section_learned_reverse() {
  learned_eval "$1" models/learned-reverse.json default cpu0 cpu037 cpu050 cpu072 cpu100 cpu200 \
    cpu235 cpu250 cpu300
}

total_start=$SECONDS
for w in "${wanted[@]}"; do
  start=$SECONDS
  echo "== $w" >&2
  dir=$work/$w
  rm -rf "$dir"
  mkdir -p "$dir"
  "section_${w//-/_}" "$dir"
  python3 scripts/results_table.py "$w" "$dir" "$doc"
  echo "== $w done in $((SECONDS - start)) s (total $((SECONDS - total_start)) s)" >&2
done
