#!/usr/bin/env bash
# Claude Code (@anthropic-ai/claude-code 2.x) against the gateway, offline, in -p mode:
#   1. model mock-claude (the built-in mock): the prompt asks the mock for a Bash tool call,
#      Claude Code runs `echo sy-ok`, and the mock answers `tool result: …` holding sy-ok;
#   2. model claude-sonnet-4-5 on a fake Anthropic upstream (fake-anthropic.ts) doing the
#      same round trip through the pass-through path.
# Each must end with the answer holding sy-ok, and Claude Code's debug log must show no
# fallback to a non-streaming request. Not run in CI (the package is large); run it by hand:
#   bash scripts/clients/claude-code.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bun="$root/node_modules/.bin/bun"
cache=${CLAUDE_CODE_DIR:-$HOME/.cache/switchyard-claude-code}
if [ ! -x "$cache/node_modules/.bin/claude" ]; then
  echo "installing @anthropic-ai/claude-code@2 into $cache"
  mkdir -p "$cache" && (cd "$cache" && npm init -y >/dev/null && npm install --no-audit --no-fund @anthropic-ai/claude-code@2 >/dev/null) || { echo "FAIL: could not install Claude Code"; exit 1; }
fi
claude="$cache/node_modules/.bin/claude"
work=$(mktemp -d)
key=sk-sy-claude-code-check-0123456789abcdef
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"; }
trap cleanup EXIT

# wait_for FILE PATTERN → the first match's URL
wait_for() {
  for _ in $(seq 1 100); do
    url=$(grep -oE "$2 on http://[0-9.:]+" "$1" 2>/dev/null | head -1 | grep -oE 'http://[0-9.:]+')
    [ -n "$url" ] && { echo "$url"; return 0; }
    sleep 0.1
  done
  return 1
}

# Children start in this shell (never in a $(…) subshell), so the EXIT trap can stop them.
start_gateway() { # NAME [ENV…]
  local name=$1; shift
  env "$@" SWITCHYARD_BOOTSTRAP_KEY=$key "$bun" "$root/src/main.ts" serve --port 0 --data-dir "$work/$name" >"$work/$name.log" 2>&1 &
  pids+=($!)
}

run_claude() { # NAME BASE_URL MODEL → 0 when the answer holds sy-ok and no fallback happened
  local name=$1 url=$2 model=$3
  (cd "$work" && ANTHROPIC_BASE_URL="$url/api/beta" ANTHROPIC_API_KEY=$key \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1 \
    timeout 180 "$claude" -p --model "$model" --allowedTools Bash --debug-file "$work/$name.debug" \
    'mock: tool Bash {"command":"echo sy-ok","description":"echo"}' >"$work/$name.out" 2>"$work/$name.err")
  local code=$?
  echo "--- $name: exit $code; answer:"
  cat "$work/$name.out"
  local ok=0
  grep -q 'sy-ok' "$work/$name.out" || { echo "    the answer does not hold sy-ok"; ok=1; }
  [ -s "$work/$name.debug" ] || { echo "    Claude Code wrote no debug log"; ok=1; }
  if grep -iqE 'non-?streaming|fallback' "$work/$name.debug" 2>/dev/null; then
    echo "    the debug log mentions a fallback:"; grep -iE 'non-?streaming|fallback' "$work/$name.debug" | head -5; ok=1
  fi
  [ $code -eq 0 ] || ok=1
  echo "    debug log: $(wc -l <"$work/$name.debug" 2>/dev/null || echo 0) lines; about streams:"
  grep -iE "stream" "$work/$name.debug" 2>/dev/null | head -3 | cut -c1-160 | sed 's/^/      /'
  return $ok
}

status=0
start_gateway mock
gw=$(wait_for "$work/mock.log" listening) || { echo "FAIL: gateway did not start"; cat "$work/mock.log"; exit 1; }
if run_claude mock "$gw" mock-claude; then echo "PASS mock-claude"; else echo "FAIL mock-claude"; status=1; fi

"$bun" "$root/scripts/clients/fake-anthropic.ts" >"$work/fake.log" 2>&1 &
pids+=($!)
fake=$(wait_for "$work/fake.log" listening) || { echo "FAIL: fake upstream did not start"; exit 1; }
start_gateway upstream ANTHROPIC_BASE_URL="$fake" ANTHROPIC_API_KEY=sk-fake-upstream
gw2=$(wait_for "$work/upstream.log" listening) || { echo "FAIL: gateway did not start"; exit 1; }
if run_claude upstream "$gw2" claude-sonnet-4-5; then echo "PASS claude-sonnet-4-5 (fake upstream)"; else echo "FAIL claude-sonnet-4-5 (fake upstream)"; status=1; fi
exit $status
