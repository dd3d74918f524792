#!/bin/sh
# Makes docs/report-rejected.png, the README's picture of a failing report: the shipped suite on
# the simulated fault example examples/faults/lane_degradation.yaml (a marginal cable), its pytest-html page rendered by
# headless Chromium. Run from the repository root with the project's venv active.
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pytest --cluster=examples/faults/lane_degradation.yaml -p no:cacheprovider -p no:randomly -q \
  --html="$out/report.html" --self-contained-html >/dev/null || true
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$out/profile" --proxy-server=http://127.0.0.1:9 \
  --window-size=1280,1900 --virtual-time-budget=5000 \
  --screenshot="$PWD/docs/report-rejected.png" "file://$out/report.html" 2>/dev/null
echo "wrote docs/report-rejected.png"
