#!/usr/bin/env bash
# Makes docs/images/trace-viewer.png, docs/cli.md's picture of the trace
# viewer: a real --dump of tests/runtime/programs/jit_log_shapes.tsb (a loop,
# its side trace, a blacklisted loop) opened at trace 0 by headless Chromium.
#   tools/viewer-screenshot.sh [build/tessera-vm]
set -euo pipefail
cd "$(dirname "$0")/.."
VM=${1:-build/tessera-vm}
BROWSER=$(command -v chromium || command -v chromium-browser || true)
[[ -n "$BROWSER" ]] || { echo "viewer-screenshot.sh: Chromium is not installed (apt install chromium)" >&2; exit 1; }
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
cp tests/runtime/programs/jit_log_shapes.tsb "$DIR/"
(cd "$DIR" && "$OLDPWD/$VM" run jit_log_shapes.tsb --jit-param async=0 --jit-param blacklist=2 --dump dump >/dev/null)
"$BROWSER" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --window-size=1280,800 \
  --screenshot="$PWD/docs/images/trace-viewer.png" "file://$DIR/dump/index.html#trace=0" 2>/dev/null
echo "wrote docs/images/trace-viewer.png"
