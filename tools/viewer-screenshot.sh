#!/usr/bin/env bash
# Makes the pictures of the trace viewer in the README, docs/cli.md and
# docs/observability.md from a real --dump of examples/jit_tour.tsb (a
# scalar loop with side traces, a function trace, an MLP's fused kernels),
# opened by headless Chromium:
#   docs/images/trace-viewer.png        the source, its heat (time per line) and markers
#   docs/images/trace-viewer-trace.png  the hottest scalar trace: its IR per pass
#   tools/viewer-screenshot.sh [build/tessera-vm]
set -euo pipefail
cd "$(dirname "$0")/.."
VM=${1:-build/tessera-vm}
BROWSER=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$BROWSER" ]] || { echo "viewer-screenshot.sh: Chromium is not installed (apt install chromium)" >&2; exit 1; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cp examples/jit_tour.tsb "$DIR/"
(cd "$DIR" && "$OLDPWD/$VM" run jit_tour.tsb --jit-param async=0 --device=cpu --dump dump >/dev/null)
shot() {  # VIEW FILE
  "$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --window-size=1280,800 \
    --virtual-time-budget=5000 --screenshot="$PWD/docs/images/$2" "file://$DIR/dump/index.html#$1" 2>/dev/null
  echo "wrote docs/images/$2"
}
shot source trace-viewer.png
shot trace=0 trace-viewer-trace.png
