#!/usr/bin/env bash
# Scale benchmark: how run time and memory grow with the cluster. Makes openb-shaped node lists
# of any size (openb's GPU node list repeated, names suffixed -x1, -x2, ...; other sizes keep
# openb's share of every node type), runs greensched on them under /usr/bin/time -v and prints
# a table, writes it as JSON, and prints the sha256 of every output file, so that a faster
# build can be checked to give the same results.
#
#   scripts/scale-bench.sh [replay] [--k "1 4 16"] [options]
#   scripts/scale-bench.sh fleet [--sites 4] [--nodes-per-site 5000] [options]
#
#   replay                 (default) simulate --mode replay at --load % offered GPU load for
#                          --days days after --warmup-days, one run per repeat count k, on
#                          openb's GPU node list repeated k times (1213 k nodes)
#   fleet                  greensched multi on --sites sites of --nodes-per-site nodes each,
#                          the carbon series of examples/fleet-4-regions.json, one agent
#   --k "LIST"             replay: repeat counts (default "1 4 16"; 64 takes minutes)
#   --sites N              fleet: sites (default 4)
#   --nodes-per-site N     fleet: nodes per site (default 5000)
#   --agent NAME           fleet: dispatch agent (default local)
#   --policy NAME          scheduling policy (default fgd)
#   --load PCT             offered GPU load in % (default 70)
#   --days D               measured days (default 14)
#   --warmup-days D        days run before the measured ones (default 1)
#   --seed N               seed of the drawn jobs (default 42)
#   --work DIR             folder for node lists, outputs and the JSON (default: a new folder
#                          under $TMPDIR, kept); inside the checkout only where git ignores
#                          it (a build folder)
#   --json FILE            the JSON table (default WORK/scale-bench.json)
#   --greensched BIN       the binary (default $GREENSCHED, else build/greensched)
#
# Data: $GREENSCHED_DATA, else $GREENSCHED_SHARED_DATA, else ../shared/data beside the
# checkout. The same binary, data and options give the same sha256 on any machine.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'
}

die() {
  echo "error: $*" >&2
  exit 2
}

mode=replay
ks="1 4 16"
sites=4
nodes_per_site=5000
agent=local
policy=fgd
load=70
days=14
warmup=1
seed=42
work=
json=
bin=${GREENSCHED:-$repo/build/greensched}
while [[ $# -gt 0 ]]; do
  case $1 in
    replay | fleet) mode=$1 ;;
    --k) ks=${2:?--k needs a list}; shift ;;
    --sites) sites=${2:?--sites needs a number}; shift ;;
    --nodes-per-site) nodes_per_site=${2:?--nodes-per-site needs a number}; shift ;;
    --agent) agent=${2:?--agent needs a name}; shift ;;
    --policy) policy=${2:?--policy needs a name}; shift ;;
    --load) load=${2:?--load needs a number}; shift ;;
    --days) days=${2:?--days needs a number}; shift ;;
    --warmup-days) warmup=${2:?--warmup-days needs a number}; shift ;;
    --seed) seed=${2:?--seed needs a number}; shift ;;
    --work) work=${2:?--work needs a folder}; shift ;;
    --json) json=${2:?--json needs a file}; shift ;;
    --greensched) bin=${2:?--greensched needs a file}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "error: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

positive_int() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
number() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
for k in $ks; do positive_int "$k" || die "--k: '$k' is not a positive whole number"; done
[[ -n ${ks// /} ]] || die "--k: empty list"
positive_int "$sites" || die "--sites: '$sites' is not a positive whole number"
positive_int "$nodes_per_site" || die "--nodes-per-site: '$nodes_per_site' is not a positive whole number"
positive_int "$seed" || [[ $seed == 0 ]] || die "--seed: '$seed' is not a whole number"
number "$load" || die "--load: '$load' is not a number"
number "$days" || die "--days: '$days' is not a number"
number "$warmup" || die "--warmup-days: '$warmup' is not a number"

data=${GREENSCHED_DATA:-${GREENSCHED_SHARED_DATA:-$repo/../shared/data}}
source_nodes=$data/openb/openb_node_list_gpu_node.csv
pods=$data/openb/openb_pod_list_default.csv
for f in "$source_nodes" "$pods"; do
  [[ -f $f ]] || {
    echo "error: $f not found: set GREENSCHED_DATA to the shared data folder" \
      "(with openb/ and carbon/) or place it at ../shared/data beside the checkout" >&2
    exit 1
  }
done
[[ -x $bin ]] || { echo "error: greensched binary $bin not found; build it or pass --greensched" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time not found (Debian package: time)" >&2; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

if [[ -z $work ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/greensched-scale.XXXXXX")
fi
work=$(realpath -m "$work")
# Inside the checkout only where git ignores it (a build folder): never among the sources.
case $work/ in
  "$(realpath "$repo")"/*)
    git -C "$repo" check-ignore -q "$work" 2>/dev/null ||
      die "--work $work is inside the repository and not ignored by git; choose a folder outside it"
    ;;
esac
mkdir -p "$work"
json=${json:-$work/scale-bench.json}

# make_nodes SOURCE N OUT: N nodes of openb's node types in the source's proportions (largest
# remainder, ties to the type seen first): copy c of the list (c = 1, 2, ...) names its nodes
# NAME-xc and takes each node while its type still has room. N = k x rows gives k whole copies.
make_nodes() {
  awk -F, -v want="$2" '
    NR == 1 { header = $0; next }
    NF != 5 { printf "%s:%d: expected 5 columns, found %d\n", FILENAME, NR, NF > "/dev/stderr"; bad = 1; exit }
    {
      rows++; name[rows] = $1; rest[rows] = substr($0, length($1) + 1)
      t = $2 "," $3 "," $4 "," $5; type[rows] = t
      if (!(t in count)) { order[++types] = t }
      count[t]++
      if (seen[$1]++) { printf "%s:%d: node %s appears twice\n", FILENAME, NR, $1 > "/dev/stderr"; bad = 1; exit }
    }
    END {
      if (bad) exit 1
      if (rows == 0) { print "no nodes in the source list" > "/dev/stderr"; exit 1 }
      given = 0
      for (i = 1; i <= types; i++) {
        t = order[i]; left[t] = int(count[t] * want / rows); frac[t] = (count[t] * want) % rows
        given += left[t]
      }
      while (given < want) {
        best = ""
        for (i = 1; i <= types; i++) if (best == "" || frac[order[i]] > frac[best]) best = order[i]
        left[best]++; frac[best] = -1; given++
      }
      print header
      for (copy = 1; given > 0; copy++) {
        for (r = 1; r <= rows; r++) {
          if (left[type[r]] <= 0) continue
          left[type[r]]--; given--
          print name[r] "-x" copy rest[r]
        }
      }
    }' "$1" >"$3"
}

# column FILE NAME: the value of column NAME in the first data row of a CSV.
column() {
  awk -F, -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == want) c = i; next }
    NR == 2 { if (c) print $c; exit }' "$1"
}

count_nodes() { awk 'NR > 1' "$1" | wc -l | tr -d ' '; }
count_gpus() { awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$1"; }

# timed OUTDIR CMD...: runs CMD under /usr/bin/time -v, its stderr to OUTDIR/stderr.txt.
timed() {
  local out=$1
  shift
  local shown=("$@")
  shown[0]=greensched
  echo "  \$ ${shown[*]}" >&2
  if ! /usr/bin/time -v -o "$out/time.txt" "$@" >"$out/stdout.txt" 2>"$out/stderr.txt"; then
    echo "error: the run failed:" >&2
    cat "$out/stderr.txt" >&2
    exit 1
  fi
}

wall_seconds() {
  awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0
    for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s }' "$1"
}
cpu_seconds() {
  awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ { s += $2 } END { printf "%.2f", s }' "$1"
}
max_rss_mb() { awk -F': ' '/Maximum resident set size/ { printf "%.0f", $2 / 1024 }' "$1"; }

# hashes DIR FILE...: "file sha256" lines of the outputs (JSON object members) and a combined hash.
hash_json() {
  local dir=$1 first=1 f
  shift
  printf '{'
  for f in "$@"; do
    [[ $first == 1 ]] || printf ', '
    first=0
    printf '"%s": "%s"' "$f" "$(sha256sum "$dir/$f" | cut -d' ' -f1)"
  done
  printf '}'
}
combined_hash() {
  local dir=$1
  shift
  (cd "$dir" && sha256sum "$@") | sha256sum | cut -d' ' -f1
}

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain --untracked-files=no 2>/dev/null | head -1 || true)
[[ -z $dirty ]] || commit="$commit (with uncommitted changes)"
echo "greensched scale benchmark ($mode), commit $commit, work folder $work" >&2

rows_json=()
if [[ $mode == replay ]]; then
  base_rows=$(count_nodes "$source_nodes")
  outputs=(summary.csv timeline.csv)
  printf '%5s %7s %7s %9s %9s %8s %10s %8s %8s %8s  %s\n' k nodes GPUs pods placed alloc% energy_kWh wall_s cpu_s rss_MB sha256 
  for k in $ks; do
    list=$work/nodes-x$k.csv
    make_nodes "$source_nodes" $((k * base_rows)) "$list"
    out=$work/replay-x$k
    rm -rf "$out"
    mkdir -p "$out"
    timed "$out" "$bin" simulate --mode replay --nodes "$list" --pods "$pods" --policy "$policy" \
      --queue backfill --load "$load" --days "$days" --warmup-days "$warmup" --seeds "$seed" \
      --timeline-step 3600 -j 1 -q --out "$out/result"
    s=$out/result/summary.csv
    nodes=$(count_nodes "$list")
    gpus=$(count_gpus "$list")
    total=$(column "$s" pods_total)
    placed=$(column "$s" pods_started)
    alloc=$(column "$s" gpu_alloc_pct)
    energy=$(column "$s" energy_kwh)
    wall=$(wall_seconds "$out/time.txt")
    cpu=$(cpu_seconds "$out/time.txt")
    rss=$(max_rss_mb "$out/time.txt")
    sha=$(combined_hash "$out/result" "${outputs[@]}")
    printf '%5s %7s %7s %9s %9s %8.2f %10.1f %8s %8s %8s  %s\n' "$k" "$nodes" "$gpus" "$total" \
      "$placed" "$alloc" "$energy" "$wall" "$cpu" "$rss" "${sha:0:16}"
    rows_json+=("$(printf '{"k": %s, "nodes": %s, "gpus": %s, "pods": %s, "pods_placed": %s, "gpu_alloc_pct": %s, "energy_kwh": %s, "wall_s": %s, "cpu_s": %s, "max_rss_mb": %s, "sha256": "%s", "files": %s, "out": "%s"}' \
      "$k" "$nodes" "$gpus" "$total" "$placed" "$alloc" "$energy" "$wall" "$cpu" "$rss" "$sha" \
      "$(hash_json "$out/result" "${outputs[@]}")" "$out/result")")
  done
  run_json=$(printf '"policy": "%s", "queue": "backfill", "load_pct": %s, "days": %s, "warmup_days": %s, "seed": %s' \
    "$policy" "$load" "$days" "$warmup" "$seed")
else
  list=$work/nodes-$nodes_per_site.csv
  make_nodes "$source_nodes" "$nodes_per_site" "$list"
  fleet=$work/fleet-$sites-x-$nodes_per_site.json
  carbon=(DE-LU GB US-CAL-CISO SG)
  {
    printf '{\n  "start": "2023-01-01T00:00:00Z",\n  "sites": [\n'
    for ((i = 0; i < sites; i++)); do
      zone=${carbon[$((i % 4))]}
      printf '    {"name": "site-%d", "nodes": "%s", "policy": "%s", "pue": 1.2,\n' "$i" "$list" "$policy"
      printf '     "carbon": {"path": "carbon/emaps2023/%s_2023_hourly.csv", "format": "emaps", "column": "direct"},\n' "$zone"
      printf '     "network": {"bandwidth_gbps": 10, "energy_kwh_per_gb": 0.006, "latency_s": 1}}'
      [[ $i == $((sites - 1)) ]] && printf '\n' || printf ',\n'
    done
    printf '  ]\n}\n'
  } >"$fleet"
  out=$work/fleet-$sites-x-$nodes_per_site
  rm -rf "$out"
  mkdir -p "$out"
  timed "$out" "$bin" multi --fleet "$fleet" --data-dir "$data" --pods "$pods" --agent "$agent" \
    --load "$load" --days "$days" --warmup-days "$warmup" --start 2023-01-02 --slack 12 \
    --power-down-idle 1800 --wake-delay 300 --seeds "$seed" --no-bound --decisions -j 1 -q \
    --out "$out/result"
  outputs=(summary.csv timeline.csv decisions.csv energy_timeline.csv)
  s=$out/result/summary.csv
  nodes=$((sites * $(count_nodes "$list")))
  gpus=$((sites * $(count_gpus "$list")))
  jobs=$(column "$s" jobs)
  never=$(column "$s" jobs_never_started)
  alloc=$(column "$s" gpu_alloc_pct)
  energy=$(column "$s" energy_kwh)
  carbon_kg=$(column "$s" carbon_kg)
  wall=$(wall_seconds "$out/time.txt")
  cpu=$(cpu_seconds "$out/time.txt")
  rss=$(max_rss_mb "$out/time.txt")
  sha=$(combined_hash "$out/result" "${outputs[@]}")
  printf '%5s %7s %7s %9s %9s %8s %10s %10s %8s %8s %8s  %s\n' sites nodes GPUs jobs placed alloc% energy_kWh carbon_kg wall_s cpu_s rss_MB sha256
  printf '%5s %7s %7s %9s %9s %8.2f %10.1f %10.1f %8s %8s %8s  %s\n' "$sites" "$nodes" "$gpus" \
    "$jobs" "$((jobs - never))" "$alloc" "$energy" "$carbon_kg" "$wall" "$cpu" "$rss" "${sha:0:16}"
  rows_json+=("$(printf '{"sites": %s, "nodes_per_site": %s, "nodes": %s, "gpus": %s, "jobs": %s, "jobs_placed": %s, "gpu_alloc_pct": %s, "energy_kwh": %s, "carbon_kg": %s, "wall_s": %s, "cpu_s": %s, "max_rss_mb": %s, "sha256": "%s", "files": %s, "out": "%s"}' \
    "$sites" "$nodes_per_site" "$nodes" "$gpus" "$jobs" "$((jobs - never))" "$alloc" "$energy" \
    "$carbon_kg" "$wall" "$cpu" "$rss" "$sha" "$(hash_json "$out/result" "${outputs[@]}")" \
    "$out/result")")
  run_json=$(printf '"agent": "%s", "policy": "%s", "load_pct": %s, "days": %s, "warmup_days": %s, "seed": %s, "slack_h": 12, "power_down_idle_s": 1800' \
    "$agent" "$policy" "$load" "$days" "$warmup" "$seed")
fi

{
  printf '{"mode": "%s", "commit": "%s", %s, "runs": [\n' "$mode" "$commit" "$run_json"
  for ((i = 0; i < ${#rows_json[@]}; i++)); do
    printf '  %s' "${rows_json[$i]}"
    [[ $i == $((${#rows_json[@]} - 1)) ]] && printf '\n' || printf ',\n'
  done
  printf ']}\n'
} >"$json"
echo "sha256 of the outputs (the short form above hashes these lines):" >&2
for row in "${rows_json[@]}"; do
  dir=$(sed 's/.*"out": "\([^"]*\)".*/\1/' <<<"$row")
  (cd "$dir" && sha256sum "${outputs[@]}" | sed "s|  |  $dir/|") >&2
done
echo "JSON: $json" >&2
