#!/usr/bin/env bash
# Claude Code (@anthropic-ai/claude-code 2.x) against the gateway, offline, in -p mode:
#   1. mock:     --model mock-claude (the built-in mock): the prompt asks the mock for a Bash
#                tool call, Claude Code runs `echo sy-ok`, and the mock answers `tool result: …`;
#   2. upstream: --model claude-sonnet-4-5 on a fake Anthropic upstream (fake-anthropic.ts,
#                built on test/helpers/fake-upstream.ts) doing the same round trip through the
#                pass-through path.
#   3. default:  the same two round trips with no --model, as a new user runs Claude Code: its
#                default model (claude-opus-5-5 with max_tokens 128000 in 2.1.330) must work on
#                the mock and through the pass-through path.
#   4. translate: --model mock-gpt, a GPT-family model, under `compat: {cross_family: translate}`
#                (SWITCHYARD_CROSS_FAMILY): Claude Code's Anthropic-only parameters (thinking,
#                context_management, output_config, its betas) are translated or dropped and
#                named, and the same round trip works through the IR path. (Under the default
#                `reject` the first request is a 400 naming them, as the specification says.)
#   5. replay:   the upstream round trip recorded to cassettes (SWITCHYARD_REPLAY_MODE=record),
#                then, with the fake upstream stopped, run again on a gateway replaying them with
#                no Anthropic key or address: the same answer, every record marked replayed, no
#                key in the cassettes. Both runs use one project dir and HOME (Claude Code's
#                system prompt names its working directory).
# Not run in CI (the package is ~250 MB); run it by hand:
#   bash scripts/clients/claude-code.sh [mock|upstream|default|translate|replay]     (default: all)
#
# Claude Code is installed with npm into a cache dir outside the project (CLAUDE_CODE_DIR,
# default ~/.cache/switchyard-claude-code; CLAUDE_CODE_VERSION, default 2: npm resolves that to
# 2.1.197 today, so pass 2.1.330 for the version ../shared/design/CLIENTS.md recorded), never into
# package.json. Each scenario starts its own gateway (`bun src/main.ts serve`, a temp data dir,
# an empty config file, a known key, a free loopback port) and runs, in an empty project dir
# with an empty HOME (no user settings, login or hooks):
#   ANTHROPIC_BASE_URL=http://127.0.0.1:PORT/api/beta ANTHROPIC_API_KEY=<key>
#   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1
#   claude -p --model M --allowedTools Bash --debug-file LOG 'mock: tool Bash {"command":"echo sy-ok","description":"echo"}'
# A scenario passes when claude exits 0; its answer holds `tool result:` and `sy-ok`; the
# debug log exists, shows the streams starting and says nothing of non-streaming (its
# "falling back to non-streaming" line); the gateway recorded at least two streamed
# anthropic.messages generations, all HTTP 200 and none non-streaming; and (upstream) every
# request that reached the fake upstream asked for a stream. PASS/FAIL per scenario; the
# exit status is 1 when any failed. KEEP=1 keeps the work dir (logs, debug logs, databases).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bun="$root/node_modules/.bin/bun"
[ -x "$bun" ] || bun=$(command -v bun) || { echo "FAIL: bun not found (run npm install first)"; exit 1; }
cache=${CLAUDE_CODE_DIR:-$HOME/.cache/switchyard-claude-code}
version=${CLAUDE_CODE_VERSION:-2}
prompt='mock: tool Bash {"command":"echo sy-ok","description":"echo"}'
want=${1:-all}

installed=$(sed -nE 's/^  "version": "([^"]+)".*/\1/p' "$cache/node_modules/@anthropic-ai/claude-code/package.json" 2>/dev/null)
# an exact CLAUDE_CODE_VERSION other than the cached one installs that version
if [ -z "$installed" ] || { [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] && [ "$version" != "$installed" ]; }; then
  echo "installing @anthropic-ai/claude-code@$version into $cache"
  mkdir -p "$cache" && (cd "$cache" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund --loglevel=error "@anthropic-ai/claude-code@$version" >/dev/null) ||
    { echo "FAIL: could not install Claude Code"; exit 1; }
fi
claude="$cache/node_modules/.bin/claude"
# if npm ever blocks the package's postinstall, the platform package still holds the binary
"$claude" --version >/dev/null 2>&1 || claude=$(ls "$cache"/node_modules/@anthropic-ai/claude-code-*/claude 2>/dev/null | head -1)
"$claude" --version >/dev/null 2>&1 || { echo "FAIL: Claude Code does not run ($cache)"; exit 1; }
echo "claude: $("$claude" --version 2>/dev/null | head -1) ($claude)"

work=$(mktemp -d "${TMPDIR:-/tmp}/sy-claude-code.XXXXXX")
key=sk-sy-claude-code-check-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# wait_for FILE PATTERN → the URL on the first line matching "PATTERN on http://…"
wait_for() {
  for _ in $(seq 1 300); do
    url=$(grep -oE "$2 on http://[0-9.:]+" "$1" 2>/dev/null | head -1 | grep -oE 'http://[0-9.:]+')
    [ -n "$url" ] && { echo "$url"; return 0; }
    sleep 0.1
  done
  return 1
}

# Children start in this shell (never in a $(…) subshell), so the EXIT trap can stop them.
# The gateway sees no upstream settings but the ones given (no switchyard.yaml of the caller's
# directory, no OPENAI_*/ANTHROPIC_* of the caller's environment).
start_gateway() { # NAME [ENV…]
  local name=$1; shift
  mkdir -p "$work/$name"
  printf 'log_level: info\n' >"$work/$name/switchyard.yaml"
  (cd "$root" && exec env -u ANTHROPIC_BASE_URL -u ANTHROPIC_API_KEY -u ANTHROPIC_AUTH_TOKEN -u OPENAI_BASE_URL -u OPENAI_API_KEY \
    SWITCHYARD_CONFIG="$work/$name/switchyard.yaml" SWITCHYARD_BOOTSTRAP_KEY="$key" "$@" \
    "$bun" src/main.ts serve --host 127.0.0.1 --port 0 --data-dir "$work/$name/data") >"$work/$name/gateway.log" 2>&1 &
  gw_pid=$!
  pids+=("$gw_pid")
}

stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# records NAME: the gateway's generation records, one line each (run after the gateway stopped)
records() {
  "$bun" -e '
    import { Database } from "bun:sqlite"
    const db = new Database(process.argv[1], { readonly: true })
    for (const r of db.query("SELECT endpoint, stream, model, provider, finish_reason, http_status, error, prompt_tokens, completion_tokens, replayed FROM generations ORDER BY created_at").all())
      console.log(`${r.endpoint} stream=${r.stream} model=${r.model} provider=${r.provider} finish=${r.finish_reason} http=${r.http_status} tokens=${r.prompt_tokens}/${r.completion_tokens} replayed=${r.replayed}${r.error ? ` error=${r.error}` : ""}`)
  ' "$work/$1/data/switchyard.db" 2>&1
}

# RUN_AS=NAME runs in another scenario's project dir and HOME (a replay repeats its recording's run)
run_claude() { # NAME BASE_URL MODEL (empty: Claude Code's own default model)
  local d="$work/${RUN_AS:-$1}" url=$2 model=$3
  local model_flag=()
  [ -n "$model" ] && model_flag=(--model "$model")
  mkdir -p "$d/home" "$d/project"
  (cd "$d/project" && exec env -i PATH="$PATH" HOME="$d/home" LANG="${LANG:-C.UTF-8}" TERM=dumb \
    ANTHROPIC_BASE_URL="$url/api/beta" ANTHROPIC_API_KEY="$key" \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1 DISABLE_AUTOUPDATER=1 \
    timeout "${CLAUDE_CODE_TIMEOUT:-180}" "$claude" -p "${model_flag[@]}" --allowedTools Bash --debug-file "$d/debug.log" "$prompt") \
    </dev/null >"$d/answer.txt" 2>"$d/claude.err"
  code=$?
}

verdict() { # NAME LABEL → 0 when the scenario passed; prints the evidence either way
  local d="$work/$1" why=()
  [ "$code" -eq 0 ] || why+=("claude exited $code")
  grep -q 'tool result:' "$d/answer.txt" || why+=("the answer has no 'tool result:'")
  grep -q 'sy-ok' "$d/answer.txt" || why+=("the answer does not hold sy-ok")
  [ -s "$d/debug.log" ] || why+=("Claude Code wrote no debug log")
  grep -q 'Stream started' "$d/debug.log" 2>/dev/null || why+=("the debug log shows no stream starting")
  grep -iqE 'non-?streaming' "$d/debug.log" 2>/dev/null && why+=("the debug log mentions non-streaming")
  local recs n
  recs=$(records "$1")
  n=$(grep -c '^anthropic\.messages stream=1 .* http=200' <<<"$recs")
  [ "$n" -ge 2 ] || why+=("expected ≥ 2 streamed anthropic.messages records with HTTP 200, found $n")
  grep -q ' stream=0 ' <<<"$recs" && why+=("the gateway recorded a non-streaming generation")
  grep -q 'http=[^2]' <<<"$recs" && why+=("the gateway recorded a failed generation")
  if [ -f "$d/upstream.jsonl" ] && grep -q '\\"stream\\":false' "$d/upstream.jsonl"; then why+=("a stream:false request reached the fake upstream"); fi

  echo "--- $2: claude exit $code; answer:"
  sed 's/^/    /' "$d/answer.txt"
  [ -s "$d/claude.err" ] && { echo "--- stderr:"; head -20 "$d/claude.err" | sed 's/^/    /'; }
  echo "--- debug log ($(wc -l <"$d/debug.log" 2>/dev/null || echo 0) lines), streams and API errors:"
  grep -E 'Stream started|API error|Error in API request|non-streaming|Non-streaming' "$d/debug.log" 2>/dev/null | head -8 | cut -c1-200 | sed 's/^/    /'
  echo "--- gateway records:"
  sed 's/^/    /' <<<"$recs"
  if [ "${#why[@]}" -eq 0 ]; then echo "PASS $2"; return 0; fi
  echo "FAIL $2"
  printf '    - %s\n' "${why[@]}"
  echo "    gateway log (tail):"; tail -10 "$d/gateway.log" | sed 's/^/    | /'
  return 1
}

on_mock() { # NAME MODEL LABEL [ENV…]
  start_gateway "$1" "${@:4}"
  if gw=$(wait_for "$work/$1/gateway.log" listening); then
    run_claude "$1" "$gw" "$2"
    stop "$gw_pid"
    verdict "$1" "$3" || status=1
  else
    echo "FAIL $3: the gateway did not start"; cat "$work/$1/gateway.log"; status=1
  fi
}

on_upstream() { # NAME MODEL LABEL
  mkdir -p "$work/$1"
  (cd "$root" && exec "$bun" scripts/clients/fake-anthropic.ts --log "$work/$1/upstream.jsonl") >"$work/$1/fake.log" 2>&1 &
  fake_pid=$!
  pids+=("$fake_pid")
  if fake=$(wait_for "$work/$1/fake.log" listening); then
    start_gateway "$1" ANTHROPIC_BASE_URL="$fake" ANTHROPIC_API_KEY=sk-ant-fake-upstream
    if gw=$(wait_for "$work/$1/gateway.log" listening); then
      run_claude "$1" "$gw" "$2"
      stop "$gw_pid"
      verdict "$1" "$3" || status=1
      echo "--- requests the fake upstream received:"
      "$bun" -e '
        for (const l of (await Bun.file(process.argv[1]).text()).split("\n").filter(Boolean)) {
          const r = JSON.parse(l); let b = {}; try { b = JSON.parse(r.body) } catch {}
          const roles = (b.messages ?? []).map((m) => m.role).join(",")
          console.log(`    ${r.method} ${r.path} stream=${b.stream} model=${b.model} max_tokens=${b.max_tokens} roles=[${roles}] tools=${(b.tools ?? []).length} anthropic-beta=${r.headers["anthropic-beta"] ?? "-"}`)
        }' "$work/$1/upstream.jsonl" 2>/dev/null || echo "    (none)"
    else
      echo "FAIL $3: the gateway did not start"; cat "$work/$1/gateway.log"; status=1
    fi
  else
    echo "FAIL $3: the fake upstream did not start"; cat "$work/$1/fake.log"; status=1
  fi
  stop "$fake_pid"
}

# on_replay LABEL: records the upstream round trip to cassettes, then replays it offline
on_replay() {
  local cassettes="$work/replay/cassettes" why=() recorded
  mkdir -p "$work/replay"
  (cd "$root" && exec "$bun" scripts/clients/fake-anthropic.ts --log "$work/replay/upstream.jsonl") >"$work/replay/fake.log" 2>&1 &
  fake_pid=$!
  pids+=("$fake_pid")
  if ! fake=$(wait_for "$work/replay/fake.log" listening); then echo "FAIL $1: the fake upstream did not start"; status=1; return; fi
  start_gateway replay-record ANTHROPIC_BASE_URL="$fake" ANTHROPIC_API_KEY=sk-ant-fake-upstream-recording-0001 SWITCHYARD_REPLAY_MODE=record SWITCHYARD_REPLAY_DIR="$cassettes"
  if gw=$(wait_for "$work/replay-record/gateway.log" listening); then RUN_AS=replay run_claude replay-record "$gw" claude-sonnet-4-5; else code=gateway; fi
  stop "$gw_pid"
  stop "$fake_pid"
  [ "$code" = 0 ] || why+=("the recording run: claude exited $code")
  cp "$work/replay/answer.txt" "$work/replay/answer-recorded.txt" 2>/dev/null
  recorded=$(cat "$work/replay/answer-recorded.txt" 2>/dev/null)
  # no upstream from here on, and no key for one
  start_gateway replay-replay SWITCHYARD_REPLAY_MODE=replay SWITCHYARD_REPLAY_DIR="$cassettes"
  if gw=$(wait_for "$work/replay-replay/gateway.log" listening); then RUN_AS=replay run_claude replay-replay "$gw" claude-sonnet-4-5; else code=gateway; fi
  stop "$gw_pid"
  [ "$code" = 0 ] || why+=("the replaying run: claude exited $code")
  grep -q 'tool result:' <<<"$recorded" && grep -q 'sy-ok' <<<"$recorded" || why+=("the recorded answer lacks 'tool result:' or sy-ok")
  [ "$(cat "$work/replay/answer.txt" 2>/dev/null)" = "$recorded" ] || why+=("the replayed answer differs from the recorded one")
  local recs n
  recs=$(records replay-replay)
  n=$(grep -c '^anthropic\.messages stream=1 .* http=200 .*replayed=1' <<<"$recs")
  [ "$n" -ge 2 ] || why+=("expected ≥ 2 streamed anthropic.messages records replayed with HTTP 200, found $n")
  grep -q 'replayed=0' <<<"$recs" && why+=("a generation of the replaying run was not replayed")
  grep -rq 'sk-ant-fake-upstream-recording-0001\|sk-sy-claude-code-check' "$cassettes" && why+=("the cassettes hold a key")
  echo "--- $1: recorded answer:"; sed 's/^/    /' <<<"$recorded"
  echo "--- replayed answer:"; sed 's/^/    /' "$work/replay/answer.txt" 2>/dev/null
  echo "--- cassettes: $(ls "$cassettes" 2>/dev/null | tr '\n' ' ')($(cat "$cassettes"/*.jsonl 2>/dev/null | wc -l) exchanges)"
  echo "--- records of the replaying gateway:"; sed 's/^/    /' <<<"$recs"
  if [ "${#why[@]}" -eq 0 ]; then echo "PASS $1"; return; fi
  echo "FAIL $1"
  printf '    - %s\n' "${why[@]}"
  echo "    replaying gateway log (tail):"; tail -10 "$work/replay-replay/gateway.log" | cut -c1-600 | sed 's/^/    | /'
  status=1
}

status=0
if [ "$want" = all ] || [ "$want" = mock ]; then on_mock mock mock-claude "mock-claude (built-in mock)"; fi
if [ "$want" = all ] || [ "$want" = upstream ]; then on_upstream upstream claude-sonnet-4-5 "claude-sonnet-4-5 (fake Anthropic upstream)"; fi
if [ "$want" = all ] || [ "$want" = default ]; then
  on_mock default-mock '' "Claude Code's default model (built-in mock)"
  on_upstream default-upstream '' "Claude Code's default model (fake Anthropic upstream)"
fi
if [ "$want" = all ] || [ "$want" = translate ]; then on_mock translate mock-gpt "mock-gpt, a GPT-family model (compat.cross_family: translate)" SWITCHYARD_CROSS_FAMILY=translate; fi
if [ "$want" = all ] || [ "$want" = replay ]; then on_replay "claude-sonnet-4-5 recorded to cassettes, then replayed offline"; fi
exit $status
