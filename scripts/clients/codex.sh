#!/usr/bin/env bash
# Codex CLI (@openai/codex 0.169) against the gateway's responses surface, offline, with
# `codex exec`:
#   1. mock:      model mock-gpt (the built-in mock): the prompt asks the mock for an
#                 exec_command call, codex runs `echo sy-ok`, and the mock answers `tool result: …`;
#   2. upstream:  gpt-5.1-codex on a fake OpenAI Responses upstream (fake-codex-upstream.ts,
#                 built on test/helpers/fake-upstream.ts) doing the same round trip (a reasoning
#                 item, then the exec_command call; then a text quoting the tool output) through
#                 the gateway's pass-through path;
#   3. translate: claude-sonnet-4-5 under `compat: {cross_family: translate}` on the same fake
#                 upstream speaking the Anthropic wire, through the gateway's IR path (codex's
#                 non-function tools mapped or dropped, and named in x-switchyard-compat).
#   4. default:   the same round trips with no model named anywhere (no -m, no `model` in
#                 config.toml), as a new user runs codex: once on the mock, once on the fake
#                 upstream; whatever codex picks by default must work through the gateway.
#   5. replay:    the upstream round trip recorded to cassettes (SWITCHYARD_REPLAY_MODE=record),
#                 then, with the fake upstream stopped, run again on a gateway replaying them
#                 with no OpenAI key or address: codex runs the command again and ends with the
#                 same last message, every record marked replayed, no key in the cassettes. Both
#                 runs use one project dir, HOME and CODEX_HOME, and the cassettes ignore the
#                 tool outputs codex sends back (`match.ignore: [input.*.output]`: its exec output
#                 carries a chunk id and a wall time of its own each run).
# Not run in CI (the package is ~400 MB installed); run it by hand:
#   bash scripts/clients/codex.sh [mock|upstream|translate|default|replay]     (default: all five)
#
# Codex is installed with npm into a cache dir outside the project (CODEX_DIR, default
# ~/.cache/switchyard-codex; CODEX_VERSION, default 0.169.0, the version
# ../shared/design/CLIENTS.md recorded), never into package.json. Each scenario starts its own
# gateway (`bun src/main.ts serve`, a temp data dir, a config file holding only what the scenario
# needs, a known key, a free loopback port) and runs, in an empty project dir with an empty HOME
# and its own CODEX_HOME whose config.toml names a custom provider at the gateway
# (wire_api = "responses", env_key = "GATEWAY_KEY", [features] plugins = false and
# unbounded_connection_retries = false, so nothing is fetched from outside and an unreachable
# gateway fails fast):
#   GATEWAY_KEY=<key> RUST_LOG=<codex's request and SSE tracing>
#   codex exec --skip-git-repo-check --json -o last.txt -m MODEL 'mock: tool exec_command {"cmd":"echo sy-ok"}' </dev/null
# A scenario passes when codex exits 0; its JSON events hold a completed exec_command run
# (`echo sy-ok`, exit code 0, output sy-ok) and a `turn.completed` (and no turn.failed or
# error event other than codex's "Model metadata … not found" notice for a model outside its
# catalog); the -o file holds `tool result:` and `sy-ok`; codex's trace shows ≥ 2 POSTs to
# /api/alpha/v1/responses, all with stream:true, the last one sending back a
# function_call_output holding sy-ok; the gateway recorded exactly one streamed
# openai.responses generation with HTTP 200 per POST, and GET /api/v1/generations?id=<id>
# finds every response id codex received (its response.completed events) as such a record;
# and (upstream, translate) every request that reached the fake upstream asked for a stream
# and went to the expected wire (…/responses or /v1/messages), the last one carrying the tool
# output; (translate) the gateway's x-switchyard-compat header names the non-function tools,
# checked by replaying codex's first request to the gateway. PASS/FAIL per scenario; the exit
# status is 1 when any failed. KEEP=1 keeps the work dir (codex's trace with every request
# body and SSE event, its JSON events, the gateway logs and databases, the upstream log).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bun="$root/node_modules/.bin/bun"
[ -x "$bun" ] || bun=$(command -v bun) || { echo "FAIL: bun not found (run npm install first)"; exit 1; }
cache=${CODEX_DIR:-$HOME/.cache/switchyard-codex}
version=${CODEX_VERSION:-0.169.0}
prompt='mock: tool exec_command {"cmd":"echo sy-ok"}'
# codex's default model runs in code mode: its one way to run a command is the custom tool
# `exec`, whose input is JavaScript calling the nested tools (as fake-codex-upstream.ts sends it)
exec_prompt='mock: tool exec {"input":"const r = await tools.exec_command({ cmd: \"echo sy-ok\" });\ntext(r);"}'
want=${1:-all}
case "$want" in all | mock | upstream | translate | default | replay) ;; *) echo "usage: $0 [mock|upstream|translate|default|replay]"; exit 2 ;; esac

installed=$(sed -nE 's/^  "version": "([^"]+)".*/\1/p' "$cache/node_modules/@openai/codex/package.json" 2>/dev/null)
# an exact CODEX_VERSION other than the cached one installs that version
if [ -z "$installed" ] || { [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] && [ "$version" != "$installed" ]; }; then
  echo "installing @openai/codex@$version into $cache"
  mkdir -p "$cache" && (cd "$cache" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --no-audit --no-fund --loglevel=error "@openai/codex@$version" >/dev/null) ||
    { echo "FAIL: could not install Codex"; exit 1; }
fi
codex="$cache/node_modules/.bin/codex"
# the launcher is a node script that runs the platform package's binary
"$codex" --version >/dev/null 2>&1 || codex=$(ls "$cache"/node_modules/@openai/codex-*/vendor/*/bin/codex 2>/dev/null | head -1)
"$codex" --version >/dev/null 2>&1 || { echo "FAIL: Codex does not run ($cache)"; exit 1; }
echo "codex: $("$codex" --version 2>/dev/null | head -1) ($codex)"

work=$(mktemp -d "${TMPDIR:-/tmp}/sy-codex.XXXXXX")
key=sk-sy-codex-check-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
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
# directory, no OPENAI_*/ANTHROPIC_* or SWITCHYARD_CROSS_FAMILY of the caller's environment).
start_gateway() { # NAME CONFIG_YAML [ENV…]
  local name=$1 yaml=$2; shift 2
  mkdir -p "$work/$name"
  printf 'log_level: info\n%s' "$yaml" >"$work/$name/switchyard.yaml"
  (cd "$root" && exec env -u ANTHROPIC_BASE_URL -u ANTHROPIC_API_KEY -u ANTHROPIC_AUTH_TOKEN -u OPENAI_BASE_URL -u OPENAI_API_KEY -u SWITCHYARD_CROSS_FAMILY \
    SWITCHYARD_CONFIG="$work/$name/switchyard.yaml" SWITCHYARD_BOOTSTRAP_KEY="$key" "$@" \
    "$bun" src/main.ts serve --host 127.0.0.1 --port 0 --data-dir "$work/$name/data") >"$work/$name/gateway.log" 2>&1 &
  gw_pid=$!
  pids+=("$gw_pid")
}

start_fake() { # NAME → $fake (the URL) and $fake_pid, or returns 1
  mkdir -p "$work/$1"
  (cd "$root" && exec "$bun" scripts/clients/fake-codex-upstream.ts --log "$work/$1/upstream.jsonl") >"$work/$1/fake.log" 2>&1 &
  fake_pid=$!
  pids+=("$fake_pid")
  fake=$(wait_for "$work/$1/fake.log" listening) || { echo "FAIL $1: the fake upstream did not start"; cat "$work/$1/fake.log"; return 1; }
}

stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# RUN_AS=NAME runs in another scenario's project dir, HOME and CODEX_HOME (a replay repeats its recording's run)
run_codex() { # NAME BASE_URL MODEL (empty: codex's own default model)
  local d="$work/${RUN_AS:-$1}" url=$2 model=$3
  local model_line= model_flag=()
  [ -n "$model" ] && { model_line="model = \"$model\""; model_flag=(-m "$model"); }
  mkdir -p "$d/home" "$d/codex-home" "$d/project"
  cat >"$d/codex-home/config.toml" <<EOF
$model_line
model_provider = "gateway"

[model_providers.gateway]
name = "Switchyard"
base_url = "$url/api/alpha/v1"
env_key = "GATEWAY_KEY"
wire_api = "responses"

[features]
plugins = false
unbounded_connection_retries = false
EOF
  # RUST_LOG: codex logs each request body (codex_http_client::transport, "POST to URL: {…}")
  # and each SSE event it parsed (codex_api::sse::responses, "SSE event: {…}") to stderr
  (cd "$d/project" && exec env -i PATH="$PATH" HOME="$d/home" CODEX_HOME="$d/codex-home" LANG="${LANG:-C.UTF-8}" TERM=dumb NO_COLOR=1 \
    GATEWAY_KEY="$key" RUST_LOG="codex_http_client::transport=trace,codex_api::sse::responses=trace,warn" \
    timeout "${CODEX_TIMEOUT:-180}" "$codex" exec --skip-git-repo-check --json -o "$d/last.txt" "${model_flag[@]}" "${PROMPT:-$prompt}") \
    </dev/null >"$d/events.jsonl" 2>"$d/codex.log"
  code=$?
}

# facts NAME GATEWAY_URL: reads codex's events and trace, asks the running gateway for each
# response id codex received, and prints one `key value` line per fact (verdict reads them)
facts() {
  "$bun" -e '
    const [dir, gw, key] = process.argv.slice(1)
    const text = async (f) => { try { return await Bun.file(f).text() } catch { return "" } }
    const jsonl = (t) => t.split("\n").filter(Boolean).flatMap((l) => { try { return [JSON.parse(l)] } catch { return [] } })
    const out = (k, v) => console.log(`${k} ${typeof v === "string" ? v : JSON.stringify(v)}`)
    // codex --json events
    const ev = jsonl(await text(`${dir}/events.jsonl`))
    out("turn_completed", ev.filter((e) => e.type === "turn.completed").length)
    out("turn_failed", ev.filter((e) => e.type === "turn.failed").length)
    out("errors", ev.filter((e) => e.type === "error" || e.item?.type === "error").map((e) => e.message ?? e.item?.message ?? e.error?.message).filter((m) => !/^Model metadata for .* not found/.test(m ?? "")))
    const runs = ev.filter((e) => e.type === "item.completed" && e.item?.type === "command_execution")
    out("ran", runs.filter((e) => e.item.exit_code === 0 && /echo sy-ok/.test(e.item.command) && /^sy-ok$/m.test(e.item.aggregated_output ?? "")).length)
    out("commands", runs.map((e) => `${e.item.command} → exit ${e.item.exit_code}, ${JSON.stringify(e.item.aggregated_output)}`))
    // codex trace: request bodies and SSE events
    const posts = [], completed = []
    for (const l of (await text(`${dir}/codex.log`)).split("\n")) {
      let m = / POST to (\S+): (\{.*)$/.exec(l)
      if (m) { try { posts.push({ url: m[1], body: JSON.parse(m[2]) }) } catch { posts.push({ url: m[1], body: null }) } continue }
      m = /SSE event: (\{.*)$/.exec(l)
      if (m) { try { const e = JSON.parse(m[1]); if (e.type === "response.completed") completed.push(e.response) } catch {} }
    }
    out("posts", posts.length)
    out("posts_elsewhere", posts.filter((p) => !p.url.endsWith("/api/alpha/v1/responses")).map((p) => p.url))
    out("posts_not_streaming", posts.filter((p) => p.body?.stream !== true).length)
    const last = posts.at(-1)?.body
    const fco = (last?.input ?? []).filter((it) => it?.type === "function_call_output" || it?.type === "custom_tool_call_output")
    out("sent_back", fco.filter((it) => /sy-ok/.test(JSON.stringify(it.output))).length)
    for (const [i, p] of posts.entries()) {
      const b = p.body ?? {}
      out(`post${i + 1}`, `stream=${b.stream} model=${b.model} store=${b.store} input=[${(b.input ?? []).map((it) => it.type === "message" ? it.role : it.type).join(",")}] tools=[${(b.tools ?? []).map((t) => t.name ?? t.type).join(",")}] reasoning=${JSON.stringify(b.reasoning)} include=${JSON.stringify(b.include)}`)
    }
    out("responses", completed.map((r) => `${r.id} status=${r.status} output=[${(r.output ?? []).map((it) => it.type).join(",")}]`))
    // the gateway: each response id codex saw, looked up as a generation
    const found = []
    let ok = 0
    for (const r of completed) {
      const res = await fetch(`${gw}/api/v1/generations?id=${encodeURIComponent(r.id)}`, { headers: { authorization: `Bearer ${key}` } })
      const g = res.ok ? (await res.json()).generation : null
      found.push(g ? `${r.id} → ${res.status} id=${g.id} endpoint=${g.endpoint} stream=${g.stream} model=${g.model} status=${g.status}${g.error ? ` error=${g.error}` : ""}` : `${r.id} → ${res.status} ${await res.text()}`)
      if (g && g.id === r.id && g.endpoint === "openai.responses" && g.stream === true && g.status === r.status && !g.error) ok++
    }
    out("lookups", found)
    out("lookups_ok", ok)
    out("completed_ids", completed.length)
  ' "$work/$1" "$2" "$key" 2>&1
}

# records NAME: the gateway's generation records, one line each (run after the gateway stopped)
records() {
  "$bun" -e '
    import { Database } from "bun:sqlite"
    const db = new Database(process.argv[1], { readonly: true })
    for (const r of db.query("SELECT id, reply_id, endpoint, stream, model, provider, status, finish_reason, http_status, error, prompt_tokens, completion_tokens, replayed FROM generations ORDER BY created_at").all())
      console.log(`${r.endpoint} stream=${r.stream} model=${r.model} provider=${r.provider} status=${r.status} http=${r.http_status} tokens=${r.prompt_tokens}/${r.completion_tokens} id=${r.reply_id}${r.replayed ? " replayed" : ""}${r.error ? ` error=${r.error}` : ""}`)
  ' "$work/$1/data/switchyard.db" 2>&1
}

# upstream_summary NAME: the requests the fake upstream received, one line each
upstream_summary() {
  "$bun" -e '
    for (const l of (await Bun.file(process.argv[1]).text()).split("\n").filter(Boolean)) {
      const r = JSON.parse(l); let b = {}; try { b = JSON.parse(r.body) } catch {}
      const items = b.input ?? b.messages ?? []
      const kinds = Array.isArray(items) ? items.map((it) => it.type === "message" || it.type === undefined ? it.role : it.type).join(",") : typeof items
      console.log(`${r.method} ${r.path} stream=${b.stream} model=${b.model} items=[${kinds}] tools=[${(b.tools ?? []).map((t) => t.name ?? t.type).join(",")}]`)
    }' "$work/$1/codex-upstream.jsonl" 2>/dev/null
}

# compat_header NAME GATEWAY_URL: replays codex's first request to the gateway and prints
# its x-switchyard-compat header (the stream is read to its end, so it is recorded as usual)
compat_header() {
  "$bun" -e '
    const [dir, gw, key] = process.argv.slice(1)
    for (const l of (await Bun.file(`${dir}/codex.log`).text()).split("\n")) {
      const m = / POST to (\S+): (\{.*)$/.exec(l)
      if (!m) continue
      const res = await fetch(`${gw}/api/alpha/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json", accept: "text/event-stream" }, body: m[2] })
      await res.text()
      console.log(`${res.status} ${res.headers.get("x-switchyard-compat") ?? "(no x-switchyard-compat header)"}`)
      break
    }' "$work/$1" "$2" "$key" 2>&1
}

fact() { sed -n "s/^$1 //p" <<<"$facts" | head -1; }

verdict() { # NAME LABEL [UPSTREAM_PATH] → 0 when the scenario passed; prints the evidence either way
  local d="$work/$1" upath=${3:-} why=()
  [ "$code" -eq 0 ] || why+=("codex exited $code")
  [ "$(fact turn_completed)" -ge 1 ] 2>/dev/null || why+=("codex's events hold no turn.completed")
  [ "$(fact turn_failed)" = 0 ] || why+=("codex's events hold a turn.failed")
  [ "$(fact errors)" = '[]' ] || why+=("codex reported errors: $(fact errors)")
  [ "$(fact ran)" -ge 1 ] 2>/dev/null || why+=("codex did not run echo sy-ok (exit 0, output sy-ok): $(fact commands)")
  [ -s "$d/last.txt" ] || why+=("the -o file is empty or missing")
  grep -q 'tool result:' "$d/last.txt" 2>/dev/null || why+=("the last message has no 'tool result:'")
  grep -q 'sy-ok' "$d/last.txt" 2>/dev/null || why+=("the last message does not hold sy-ok")
  local posts
  posts=$(fact posts)
  [ "${posts:-0}" -ge 2 ] || why+=("codex's trace shows ${posts:-no} POSTs to the gateway, expected ≥ 2")
  [ "${posts:-0}" -ge 1 ] || why+=("(no POST in codex's trace at all: does this codex version still trace request bodies under RUST_LOG=codex_http_client::transport=trace?)")
  [ "$(fact posts_elsewhere)" = '[]' ] || why+=("codex POSTed elsewhere: $(fact posts_elsewhere)")
  [ "$(fact posts_not_streaming)" = 0 ] || why+=("codex sent $(fact posts_not_streaming) requests without stream:true")
  [ "$(fact sent_back)" -ge 1 ] 2>/dev/null || why+=("codex's last request carries no function_call_output holding sy-ok")
  [ "$(fact completed_ids)" -ge 2 ] 2>/dev/null || why+=("codex received $(fact completed_ids) response.completed events, expected ≥ 2")
  [ "$(fact lookups_ok)" = "$(fact completed_ids)" ] || why+=("not every response id codex received is a streamed openai.responses generation of that status, without error (GET /api/v1/generations)")
  local recs n
  recs=$(records "$1")
  [ -n "$replayed" ] && recs=$(head -n "-$replayed" <<<"$recs") # the compat replay's own record is not codex's
  n=$(grep -c '^openai\.responses stream=1 .* http=200 ' <<<"$recs")
  [ "$n" = "${posts:-0}" ] || why+=("expected $posts streamed openai.responses records with HTTP 200 (one per POST), found $n")
  [ "$(grep -c . <<<"$recs")" = "$n" ] || why+=("the gateway recorded other generations too")
  if [ -n "$upath" ]; then
    local ups nu
    ups=$(upstream_summary "$1")
    nu=$(grep -c . <<<"$ups")
    [ "$nu" -ge 2 ] || why+=("the fake upstream received $nu requests, expected ≥ 2")
    [ "$(grep -c " stream=true " <<<"$ups")" = "$nu" ] || why+=("a request without stream:true reached the fake upstream")
    [ "$(grep -c "^POST $upath " <<<"$ups")" = "$nu" ] || why+=("not every upstream request went to POST $upath")
    tail -1 "$d/codex-upstream.jsonl" 2>/dev/null | grep -q 'sy-ok' || why+=("the last upstream request does not carry the tool output sy-ok")
  fi
  if [ -n "${compat_want:-}" ]; then
    grep -qE "$compat_want" <<<"$compat" || why+=("x-switchyard-compat does not match /$compat_want/: $compat")
  fi

  echo "--- $2: codex exit $code; last message (-o):"
  sed 's/^/    /' "$d/last.txt" 2>/dev/null
  [ -n "$(tail -c1 "$d/last.txt" 2>/dev/null)" ] && echo
  echo "--- codex events: $("$bun" -e 'console.log((await Bun.file(process.argv[1]).text()).split("\n").filter(Boolean).map((l) => { const e = JSON.parse(l); return e.item ? `${e.type}(${e.item.type})` : e.type }).join(" "))' "$d/events.jsonl" 2>/dev/null)"
  echo "    commands: $(fact commands)"
  echo "--- requests codex sent (its trace):"
  sed -n 's/^post[0-9]* /    /p' <<<"$facts"
  echo "--- responses codex received: $(fact responses)"
  echo "--- generation lookups:"
  fact lookups | "$bun" -e 'for (const l of JSON.parse(await Bun.stdin.text() || "[]")) console.log("    " + l)' 2>/dev/null
  echo "--- gateway records:"
  sed 's/^/    /' <<<"${recs:-(none)}"
  if [ -n "$upath" ]; then echo "--- requests the fake upstream received:"; sed 's/^/    /' <<<"${ups:-(none)}"; fi
  [ -n "${compat_want:-}" ] && echo "--- x-switchyard-compat (codex's first request replayed): $compat"
  if [ "${#why[@]}" -eq 0 ]; then echo "PASS $2"; return 0; fi
  echo "FAIL $2"
  printf '    - %s\n' "${why[@]}"
  echo "    codex stderr (warnings and errors):"; grep -vE 'codex_http_client::transport|codex_api::sse::responses|Unknown model .* fallback model metadata|^\s*$' "$d/codex.log" | tail -8 | cut -c1-300 | sed 's/^/    | /'
  echo "    gateway log (tail):"; tail -10 "$d/gateway.log" | sed 's/^/    | /'
  return 1
}

scenario() { # NAME LABEL MODEL CONFIG_YAML UPSTREAM_PATH [ENV…]
  local name=$1 label=$2 model=$3 yaml=$4 upath=$5; shift 5
  start_gateway "$name" "$yaml" "$@"
  if gw=$(wait_for "$work/$name/gateway.log" listening); then
    run_codex "$name" "$gw" "$model"
    facts=$(facts "$name" "$gw")
    # what reached the fake upstream during codex's run (the compat replay below adds to the log)
    [ -f "$work/$name/upstream.jsonl" ] && cp "$work/$name/upstream.jsonl" "$work/$name/codex-upstream.jsonl"
    replayed= compat=
    if [ -n "${compat_want:-}" ]; then
      compat=$(compat_header "$name" "$gw")
      [[ "$compat" == 200\ * ]] && replayed=1 # a 200 replay is recorded too
    fi
    stop "$gw_pid"
    verdict "$name" "$label" "$upath" || status=1
  else
    echo "FAIL $label: the gateway did not start"; cat "$work/$name/gateway.log"; status=1
  fi
}

# on_replay LABEL: records the upstream round trip to cassettes, then replays it offline
on_replay() {
  local cassettes="$work/replay/cassettes" why=() recorded
  local yaml=$'replay:\n  match:\n    ignore: [input.*.output]\n'
  start_fake replay || { status=1; return; }
  start_gateway replay-record "$yaml" OPENAI_BASE_URL="$fake/v1" OPENAI_API_KEY=sk-fake-openai-recording-0001 SWITCHYARD_REPLAY_MODE=record SWITCHYARD_REPLAY_DIR="$cassettes"
  if gw=$(wait_for "$work/replay-record/gateway.log" listening); then RUN_AS=replay run_codex replay-record "$gw" gpt-5.1-codex; else code=gateway; fi
  stop "$gw_pid"
  stop "$fake_pid"
  [ "$code" = 0 ] || why+=("the recording run: codex exited $code")
  recorded=$(cat "$work/replay/last.txt" 2>/dev/null)
  rm -f "$work/replay/last.txt"
  # no upstream from here on, and no key for one
  start_gateway replay-replay "$yaml" SWITCHYARD_REPLAY_MODE=replay SWITCHYARD_REPLAY_DIR="$cassettes"
  if gw=$(wait_for "$work/replay-replay/gateway.log" listening); then RUN_AS=replay run_codex replay-replay "$gw" gpt-5.1-codex; else code=gateway; fi
  stop "$gw_pid"
  [ "$code" = 0 ] || why+=("the replaying run: codex exited $code")
  grep -q 'tool result:' <<<"$recorded" && grep -q 'sy-ok' <<<"$recorded" || why+=("the recorded last message lacks 'tool result:' or sy-ok")
  [ "$(cat "$work/replay/last.txt" 2>/dev/null)" = "$recorded" ] || why+=("the replayed last message differs from the recorded one")
  grep -q '"type":"command_execution".*echo sy-ok' "$work/replay/events.jsonl" 2>/dev/null || why+=("codex did not run echo sy-ok in the replaying run")
  local recs n
  recs=$(records replay-replay)
  n=$(grep -c '^openai\.responses stream=1 .* http=200 .* replayed' <<<"$recs")
  [ "$n" -ge 2 ] || why+=("expected ≥ 2 streamed openai.responses records replayed with HTTP 200, found $n")
  [ "$(grep -c . <<<"$recs")" = "$n" ] || why+=("the replaying gateway recorded generations that were not replayed")
  grep -rq 'sk-fake-openai-recording-0001\|sk-sy-codex-check' "$cassettes" && why+=("the cassettes hold a key")
  echo "--- $1: recorded last message:"; sed 's/^/    /' <<<"$recorded"
  echo "--- replayed last message:"; sed 's/^/    /' "$work/replay/last.txt" 2>/dev/null; echo
  echo "--- cassettes: $(ls "$cassettes" 2>/dev/null | tr '\n' ' ')($(cat "$cassettes"/*.jsonl 2>/dev/null | wc -l) exchanges)"
  echo "--- records of the replaying gateway:"; sed 's/^/    /' <<<"$recs"
  if [ "${#why[@]}" -eq 0 ]; then echo "PASS $1"; return; fi
  echo "FAIL $1"
  printf '    - %s\n' "${why[@]}"
  echo "    replaying gateway log (tail):"; tail -10 "$work/replay-replay/gateway.log" | cut -c1-600 | sed 's/^/    | /'
  status=1
}

status=0
if [ "$want" = all ] || [ "$want" = mock ]; then
  compat_want='' scenario mock "mock-gpt (built-in mock)" mock-gpt '' ''
fi

if [ "$want" = all ] || [ "$want" = upstream ]; then
  if start_fake upstream; then
    compat_want='' scenario upstream "gpt-5.1-codex (fake OpenAI Responses upstream, pass-through)" gpt-5.1-codex '' /v1/responses \
      OPENAI_BASE_URL="$fake/v1" OPENAI_API_KEY=sk-fake-openai-upstream
    stop "$fake_pid"
  else status=1; fi
fi

if [ "$want" = all ] || [ "$want" = translate ]; then
  if start_fake translate; then
    # codex's uncatalogued-model tool set holds a namespace and a web_search tool besides functions
    compat_want='web_search|multi_agent' scenario translate "claude-sonnet-4-5 (compat.cross_family: translate, fake Anthropic upstream)" claude-sonnet-4-5 \
      $'compat:\n  cross_family: translate\n' /v1/messages ANTHROPIC_BASE_URL="$fake" ANTHROPIC_API_KEY=sk-ant-fake-upstream
    stop "$fake_pid"
  else status=1; fi
fi

if [ "$want" = all ] || [ "$want" = default ]; then
  PROMPT="$exec_prompt" compat_want='' scenario default-mock "codex's default model (built-in mock)" '' '' ''
  if start_fake default-upstream; then
    PROMPT="$exec_prompt" compat_want='' scenario default-upstream "codex's default model (fake OpenAI Responses upstream, pass-through)" '' '' /v1/responses \
      OPENAI_BASE_URL="$fake/v1" OPENAI_API_KEY=sk-fake-openai-upstream
    stop "$fake_pid"
  else status=1; fi
fi
if [ "$want" = all ] || [ "$want" = replay ]; then on_replay "gpt-5.1-codex recorded to cassettes, then replayed offline"; fi
exit $status
