#!/usr/bin/env bash
# The HTML report in a real browser (ctest label: browser). Runs `greensched simulate` and
# `greensched multi`, writes a report for each, loads both in headless Chromium, and checks
# that every expected chart is in the rendered DOM with SVG content, that no script failed,
# and keeps a screenshot of each page.
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
multi=$work/multi

# 1. Runs; decision records (for the failed-pod explanations) from one smaller run, since
#    recording every decision of all the runs is slow.
"$bin" simulate --policy all --seeds 42-43 --out "$sim" -q >"$work/simulate.txt" ||
  fail "greensched simulate failed"
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
"$bin" report --in "$multi" --out "$multi/report.html" || fail "greensched report (multi) failed"
rm -f "$work/decisions.jsonl"  # large; the report holds what it needs

sim_charts=(chart-alloc chart-alloc-zoom chart-frag chart-power)
if [ -f "$sim/occupancy.csv" ]; then sim_charts+=(chart-occupancy-1); fi
multi_charts=(chart-multi-carbon chart-multi-energy chart-multi-intensity chart-multi-carbon-time
  chart-multi-queue chart-energy-sources-0 chart-energy-soc chart-energy-cost chart-energy-carbon)

chrome() {
  local profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@"
}

# 3. The rendered DOM: every chart with SVG content, every table, the script ran, no errors.
check_page() {
  local name=$1 html=$2
  shift 2
  local dom=$work/$name.dom.html err=$work/$name.stderr
  chrome --dump-dom "file://$html" >"$dom" 2>"$err" || {
    cat "$err" >&2
    fail "$name: chromium --dump-dom failed"
  }
  if grep -E "Uncaught|SyntaxError" "$err" >&2; then fail "$name: script error in the page"; fi
  grep -q 'data-report-check="ok"' "$dom" || fail "$name: the page's check script did not pass"
  local id figure
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
check_page multi "$multi/report.html" "${multi_charts[@]}"
if [ "${#record[@]}" -gt 0 ]; then
  grep -q '<article class="failed-pod">' "$work/simulate.dom.html" ||
    fail "simulate: no failed pod explained"
  echo "ok: simulate failed-pods"
fi

# 4. Screenshots to look at.
chrome --screenshot="$artifacts/report.png" --window-size=1400,4000 --hide-scrollbars \
  "file://$sim/report.html" >/dev/null 2>&1 || fail "screenshot of the simulate report failed"
chrome --screenshot="$artifacts/report-multi.png" --window-size=1400,4000 --hide-scrollbars \
  "file://$multi/report.html" >/dev/null 2>&1 || fail "screenshot of the multi report failed"
[ -s "$artifacts/report.png" ] || fail "no screenshot written"
echo "screenshot: $artifacts/report.png"
echo "screenshot: $artifacts/report-multi.png"
echo "reports: $sim/report.html $multi/report.html"
