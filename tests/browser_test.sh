#!/usr/bin/env bash
# The HTML pages in a real browser (ctest label: browser). Runs `greensched simulate` (twice),
# `simulate --mode replay` and `multi`, writes a report for each of the first, replay and multi
# runs and a `greensched compare` page of the two simulate runs, loads each in headless
# Chromium at window widths 1400 and 1000, and checks that every expected chart is in the
# rendered DOM with SVG content, that no script failed, and that no table, chart or header
# cell is wider than its card (the page's own check, read back from the DOM); keeps a
# screenshot of each page at each width.
#
#   browser_test.sh GREENSCHED_BINARY WORK_DIR ARTIFACTS_DIR
#
# Without Chromium: exit 77 (ctest: skipped), or fail when CI=true. `make deps` installs it.
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 GREENSCHED_BINARY WORK_DIR ARTIFACTS_DIR" >&2
  exit 2
fi
bin=$1
work=$2
artifacts=$3

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser=$candidate
    break
  fi
done
if [ -z "$browser" ]; then
  message="chromium is not installed: run 'make deps' or 'apt-get install chromium'"
  if [ "${CI:-}" = "true" ]; then fail "$message (CI=true)"; fi
  echo "SKIP: $message" >&2
  exit 77
fi

rm -rf "$work"
mkdir -p "$work/sim" "$artifacts"
sim=$work/sim
sim2=$work/sim-tune
replay=$work/replay
multi=$work/multi
compare=$work/compare

# 1. Runs; decision records (for the failed-pod explanations) from one smaller run, since
#    recording every decision of all the runs is slow.
"$bin" simulate --policy all --seeds 42-43 --out "$sim" -q >"$work/simulate.txt" ||
  fail "greensched simulate failed"
"$bin" simulate --policy fgd,bestfit --seeds 42-43 --tune 1.1 --out "$sim2" -q \
  >"$work/simulate-tune.txt" || fail "greensched simulate --tune 1.1 failed"
# Two GPU power rules and two sleep settings: the replay table at its widest.
"$bin" simulate --mode replay --load 30 --days 1 --queue backfill --policy fgd,bestfit \
  --power-down-idle off,30m --gpu-power pwr,proportional --seeds 42 --out "$replay" -q \
  >"$work/replay.txt" || fail "greensched simulate --mode replay failed"
"$bin" multi --days 3 --power-down-idle 1800 --agent local,green --energy-controller none,greedy \
  --out "$multi" -q \
  >"$work/multi.txt" || fail "greensched multi failed"
record=()
if "$bin" simulate --help | grep -q -- '--record'; then
  "$bin" simulate --policy fgd --seeds 42 --tune 1.1 -q --record "$work/decisions.jsonl" \
    >/dev/null || fail "greensched simulate --record failed"
  record=(--record "$work/decisions.jsonl")
fi

# 2. Reports.
"$bin" report --in "$sim" --out "$sim/report.html" "${record[@]}" ||
  fail "greensched report (simulate) failed"
"$bin" report --in "$replay" --out "$replay/report.html" || fail "greensched report (replay) failed"
"$bin" report --in "$multi" --out "$multi/report.html" || fail "greensched report (multi) failed"
"$bin" compare "$sim" "$sim2" --out "$compare" >"$work/compare.txt" ||
  fail "greensched compare failed"
rm -f "$work/decisions.jsonl"  # large; the report holds what it needs

sim_charts=(chart-alloc chart-alloc-zoom chart-frag chart-power)
if [ -f "$sim/occupancy.csv" ]; then sim_charts+=(chart-occupancy-1); fi
replay_charts=(chart-replay-gpus chart-replay-power chart-replay-energy)
compare_charts=(chart-compare-0 chart-compare-1)
# The built-in fleet has no solar, wind, battery or prices: no site energy, battery or cost
# chart may be drawn for it (checked below), only the carbon bars.
multi_charts=(chart-multi-carbon chart-multi-energy chart-multi-intensity chart-multi-carbon-time
  chart-multi-queue chart-energy-carbon)

chrome() {
  local profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@"
}

# 3. The rendered DOM at each width: every chart with SVG content, every table, the script
#    ran, no errors, nothing wider than its card.
widths=(1400 1000)
check_page() {
  local name=$1 html=$2
  shift 2
  local width dom err layout id figure
  for width in "${widths[@]}"; do
    dom=$work/$name-$width.dom.html
    err=$work/$name-$width.stderr
    chrome --dump-dom --window-size="$width,3000" --virtual-time-budget=2000 "file://$html" \
      >"$dom" 2>"$err" || {
      cat "$err" >&2
      fail "$name at $width px: chromium --dump-dom failed"
    }
    if grep -E "Uncaught|SyntaxError" "$err" >&2; then fail "$name: script error in the page"; fi
    grep -q 'data-report-check="ok"' "$dom" || fail "$name: the page's check script did not pass"
    grep -q "data-layout-width=\"$width\"" "$dom" ||
      fail "$name: the page was not laid out at $width px ($(grep -o 'data-layout-width="[0-9]*"' "$dom"))"
    layout=$(grep -o 'data-layout-check="[^"]*"' "$dom") ||
      fail "$name at $width px: the page's layout check did not run"
    [ "$layout" = 'data-layout-check="ok"' ] ||
      fail "$name at $width px: wider than its card: $layout"
    echo "ok: $name fits at $width px"
  done
  for id in "$@"; do
    figure=$(awk -v id="$id" '
      index($0, "<figure") && index($0, "id=\"" id "\"") { f = 1 }
      f { print }
      f && index($0, "</figure>") { exit }' "$dom")
    [ -n "$figure" ] || fail "$name: no figure with id $id in the rendered page"
    grep -q '<svg' <<<"$figure" || fail "$name: $id has no <svg>"
    grep -Eq '<(path|rect)' <<<"$figure" || fail "$name: $id has an empty <svg>"
    grep -q '<figcaption>' <<<"$figure" || fail "$name: $id has no caption"
    echo "ok: $name $id"
  done
  grep -q '<table' "$dom" || fail "$name: no table"
}
check_page simulate "$sim/report.html" "${sim_charts[@]}"
check_page replay "$replay/report.html" "${replay_charts[@]}"
check_page multi "$multi/report.html" "${multi_charts[@]}"
check_page compare "$compare/compare.html" "${compare_charts[@]}"
# The headline: the fleet report leads with the bound, each agent's share and LS violations.
dom=$work/multi-1400.dom.html
grep -q 'id="table-multi-headline"' "$dom" || fail "multi: no headline table"
headline_at=$(grep -bo 'id="sec-multi-headline"' "$dom" | head -1 | cut -d: -f1)
multi_at=$(grep -bo 'id="sec-multi"' "$dom" | head -1 | cut -d: -f1)
[ -n "$headline_at" ] && [ -n "$multi_at" ] && [ "$headline_at" -lt "$multi_at" ] ||
  fail "multi: the headline does not come first"
grep -q 'of the saving the fleet bound allows' "$dom" || fail "multi: the headline states no share"
for absent in chart-energy-sources-0 chart-energy-soc chart-energy-cost; do
  if grep -q "id=\"$absent\"" "$dom"; then fail "multi: $absent drawn for a fleet without it"; fi
done
echo "ok: multi headline first, no empty energy charts"
# Replay: the charts cover the measured window and every setting (2 policies x 2 rules x 2 sleep
# settings: 8 lines in the energy chart's legend).
dom=$work/replay-1400.dom.html
grep -q 'Only the measured window is shown' "$dom" || fail "replay: the charts are not windowed"
legend=$(awk 'index($0, "id=\"chart-replay-energy\"") { f = 1 } f { print } f && index($0, "</figure>") { exit }' "$dom" |
  grep -o 'sleep after 30m\|always on' | wc -l)
[ "$legend" -ge 4 ] || fail "replay: the energy chart does not show every sleep setting ($legend)"
echo "ok: replay windowed, every setting"
# Simulate: a map per policy; the trace's GPU codes (G2, G3) are defined where they are drawn.
dom=$work/simulate-1400.dom.html
if [ -f "$sim/occupancy.csv" ]; then
  policies=$(tail -n +2 "$sim/occupancy.csv" | cut -d, -f1 | sort -u | wc -l)
  maps=$(grep -o 'id="chart-occupancy-[0-9]*"' "$dom" | sort -u | wc -l)
  [ "$maps" -eq "$policies" ] || fail "simulate: $maps occupancy maps for $policies policies"
  if grep -q '>G2<' "$dom"; then
    grep -q 'Alibaba did not disclose' "$dom" || fail "simulate: G2 drawn but not defined"
  fi
  echo "ok: simulate occupancy map per policy, GPU codes defined"
fi
# Every abbreviation or code a page shows is defined on it ("Terms used on this page"); words
# anyone reads without help (GPU, CSV, kWh, ...) and GPU model names (A100, T4) need none.
for page in simulate replay multi compare; do
  python3 - "$work/$page-1400.dom.html" "$page" <<'PY' || fail "$page: abbreviations not defined on the page"
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
terms = set(re.findall(r"<dt>([^<]+)</dt>", html))
body = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
text = re.sub(r"<[^>]+>", " ", body)
plain = {"GPU", "GPUs", "CPU", "CPUs", "CSV", "HTML", "SVG", "PNG", "UTC", "USD", "JSON", "ID",
         "IT", "CO", "OK", "API", "URL", "HTTP", "QoS", "RAM", "MiB", "GiB", "GB", "MB", "PM", "AM"}
used = set(re.findall(r"(?<![\w.-])([A-Z][A-Z0-9]{1,5}|p99)(?![\w-])", text))
model = lambda t: re.search(r"[0-9]", t) and not re.fullmatch(r"G[0-9]", t)
missing = sorted(t for t in used if t not in plain and t not in terms and not model(t))
if missing:
    print(f"{sys.argv[2]}: used but not defined on the page: {missing}", file=sys.stderr)
    sys.exit(1)
print(f"ok: {sys.argv[2]} defines {sorted(terms)}")
PY
done
if [ "${#record[@]}" -gt 0 ]; then
  grep -q '<article class="failed-pod">' "$work/simulate-1400.dom.html" ||
    fail "simulate: no failed pod explained"
  echo "ok: simulate failed-pods"
fi

# 4. Screenshots to look at: report[-replay|-multi|-compare]-WIDTH.png.
shoot() {
  local png=$artifacts/$1-$2.png
  chrome --screenshot="$png" --window-size="$2,4000" --hide-scrollbars "file://$3" >/dev/null 2>&1 ||
    fail "screenshot $png failed"
  [ -s "$png" ] || fail "no screenshot written: $png"
  echo "screenshot: $png"
}
for width in "${widths[@]}"; do
  shoot report "$width" "$sim/report.html"
  shoot report-replay "$width" "$replay/report.html"
  shoot report-multi "$width" "$multi/report.html"
  shoot report-compare "$width" "$compare/compare.html"
done
echo "pages: $sim/report.html $replay/report.html $multi/report.html $compare/compare.html"
