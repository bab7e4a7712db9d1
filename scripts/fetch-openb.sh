#!/usr/bin/env bash
# Downloads the public Alibaba openb trace (cluster-trace-gpu-v2023: 2 node lists and 24 pod
# lists) from its origin into DIR, checking each file's header line.
set -euo pipefail

readonly DEFAULT_BASE_URL="https://raw.githubusercontent.com/alibaba/clusterdata/master/cluster-trace-gpu-v2023/csv"
readonly NODE_HEADER="sn,cpu_milli,memory_mib,gpu,model"
readonly POD_HEADER_PREFIX="name,cpu_milli,memory_mib,num_gpu,gpu_milli"

readonly NODE_FILES=(
  openb_node_list_all_node.csv
  openb_node_list_gpu_node.csv
)
readonly POD_VARIANTS=(
  default
  cpu0 cpu037 cpu050 cpu072 cpu100 cpu200 cpu235 cpu250 cpu300
  gpushare20 gpushare40 gpushare60 gpushare80 gpushare100
  gpuspec05 gpuspec10 gpuspec20 gpuspec25 gpuspec33
  multigpu20 multigpu30 multigpu40 multigpu50
)

prog=$(basename "$0")

usage() {
  cat <<EOF
Usage: $prog [--force] DIR

Downloads the Alibaba openb GPU cluster trace (cluster-trace-gpu-v2023): the node lists
openb_node_list_{all_node,gpu_node}.csv and the 24 pod lists openb_pod_list_<variant>.csv
(variants: ${POD_VARIANTS[*]})
into DIR (created if missing). Files already in DIR are kept unless --force is given.
Each file is downloaded to a temporary name, its header line is checked, then it is renamed.

Options:
  -f, --force   download again even if the file exists
  -h, --help    show this help

Environment:
  OPENB_BASE_URL  where the CSVs are fetched from
                  (default: $DEFAULT_BASE_URL)

Needs curl, or wget when curl is absent.
EOF
}

die() {
  echo "$prog: error: $*" >&2
  exit 1
}

force=0
dir=""
while (($# > 0)); do
  case "$1" in
    -h | --help)
      usage
      exit 0
      ;;
    -f | --force) force=1 ;;
    --)
      shift
      break
      ;;
    -*)
      usage >&2
      die "unknown option: $1"
      ;;
    *)
      [[ -z "$dir" ]] || {
        usage >&2
        die "only one DIR may be given"
      }
      dir="$1"
      ;;
  esac
  shift
done
if (($# > 0)); then
  [[ -z "$dir" && $# -eq 1 ]] || {
    usage >&2
    die "only one DIR may be given"
  }
  dir="$1"
fi
if [[ -z "$dir" ]]; then
  usage >&2
  echo "$prog: error: missing DIR" >&2
  exit 2
fi

base_url="${OPENB_BASE_URL:-$DEFAULT_BASE_URL}"
base_url="${base_url%/}"

if command -v curl >/dev/null 2>&1; then
  downloader=curl
elif command -v wget >/dev/null 2>&1; then
  downloader=wget
else
  die "neither curl nor wget is installed"
fi

# download URL DEST
download() {
  if [[ "$downloader" == curl ]]; then
    curl --fail --silent --show-error --location --retry 3 --output "$2" "$1"
  else
    wget --quiet --tries=3 --output-document="$2" "$1"
  fi
}

# The header line of FILE without a trailing CR or a UTF-8 byte-order mark.
header_of() {
  local line=""
  IFS= read -r line <"$1" || true
  line="${line%$'\r'}"
  line="${line#$'\xEF\xBB\xBF'}"
  printf '%s' "$line"
}

# check_header FILE KIND -> 0 when the header is the expected one for KIND (node|pod)
check_header() {
  local header
  header=$(header_of "$1")
  case "$2" in
    node) [[ "$header" == "$NODE_HEADER" ]] ;;
    pod) [[ "$header" == "$POD_HEADER_PREFIX" || "$header" == "$POD_HEADER_PREFIX",* ]] ;;
  esac
}

mkdir -p -- "$dir" || die "cannot create directory $dir"

tmp=""
cleanup() {
  if [[ -n "$tmp" ]]; then rm -f -- "$tmp"; fi
}
trap cleanup EXIT

files=("${NODE_FILES[@]}")
for v in "${POD_VARIANTS[@]}"; do files+=("openb_pod_list_${v}.csv"); done

echo "fetching the openb trace from $base_url into $dir (using $downloader)"
downloaded=0
kept=0
for f in "${files[@]}"; do
  kind=pod
  [[ "$f" == openb_node_list_* ]] && kind=node
  dest="$dir/$f"
  if [[ -e "$dest" && "$force" -eq 0 ]]; then
    if ! check_header "$dest" "$kind"; then
      die "$dest exists but its header is '$(header_of "$dest")', not an openb $kind list" \
        "(rerun with --force to replace it)"
    fi
    echo "  kept        $f (already present)"
    kept=$((kept + 1))
    continue
  fi
  tmp="$dir/.$f.part.$$"
  if ! download "$base_url/$f" "$tmp"; then
    die "download of $base_url/$f failed"
  fi
  if ! check_header "$tmp" "$kind"; then
    die "$base_url/$f: unexpected header '$(header_of "$tmp")' for an openb $kind list"
  fi
  mv -f -- "$tmp" "$dest"
  tmp=""
  rows=$(($(wc -l <"$dest") - 1))
  printf '  downloaded  %s (%d rows)\n' "$f" "$rows"
  downloaded=$((downloaded + 1))
done

cat <<EOF
done: $downloaded downloaded, $kept already present, in $dir

If you use this trace, cite:
  Qizhen Weng, Lingyun Yang, Yinghao Yu, Wei Wang, Xiaochuan Tang, Guodong Yang, and
  Liping Zhang. "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
  Fragmentation Gradient Descent". In 2023 USENIX Annual Technical Conference (USENIX ATC 23).
  https://www.usenix.org/conference/atc23/presentation/weng

Example:
  greensched simulate --nodes $dir/openb_node_list_gpu_node.csv --pods $dir/openb_pod_list_default.csv
EOF
