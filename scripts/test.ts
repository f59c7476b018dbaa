// `npm test`: the suites on the embedded stores (SQLite, local disk, in-memory limits), then
// once more on the shared stores (PostgreSQL, Redis, S3) when SWITCHYARD_TEST_DATABASE_URL is set:
// PostgreSQL (every gateway a test starts gets a schema of its own: test/helpers/database.ts),
// with Redis and S3 as well when SWITCHYARD_TEST_REDIS_URL / SWITCHYARD_TEST_S3_ENDPOINT are
// set (SWITCHYARD_TEST_SHARED=1: a key prefix and a bucket per data dir, helpers/server.ts).
// Arguments go to both runs. With none and the shared stores set (CI), the files run in two
// lanes on the two cores instead, the timing suites alone first (below).
import { SQL } from 'bun'
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RUN_LOCK } from '../test/helpers/database.ts'
const args = process.argv.slice(2)
const url = process.env.SWITCHYARD_TEST_DATABASE_URL
const redis = process.env.SWITCHYARD_TEST_REDIS_URL
const s3 = process.env.SWITCHYARD_TEST_S3_ENDPOINT

/** A run whose output goes out as it comes; never blocking this process (a lane beside it goes on). */
async function run(title: string, env: Record<string, string | undefined>, extra: string[] = []): Promise<number> {
  console.log(`\n== ${title}\n`)
  const t0 = performance.now()
  const code = await Bun.spawn([process.execPath, 'test', ...extra, ...args], { env, stdio: ['inherit', 'inherit', 'inherit'] }).exited
  console.log(`(${took(t0)})`)
  return code ?? 1
}

const took = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(0)} s from start to exit`

/** Runs one after another, started beside the caller's, their output kept in a file and shown whole once they end. */
function runBeside(steps: [title: string, env: Record<string, string | undefined>, extra: string[]][]): () => Promise<number> {
  const out = join(tmpdir(), `switchyard-test-${process.pid}-${Date.now()}.log`)
  const fd = openSync(out, 'w')
  const done = (async () => {
    let code = 0
    for (const [title, env, extra] of steps) {
      writeSync(fd, `\n== ${title}\n\n`)
      const t0 = performance.now()
      const p = Bun.spawn([process.execPath, 'test', ...extra], { env, stdio: ['ignore', fd, fd] })
      code = (await p.exited) || code
      writeSync(fd, `(${took(t0)})\n`)
    }
    return code
  })()
  return async () => {
    const code = await done
    closeSync(fd)
    process.stdout.write(readFileSync(out))
    rmSync(out, { force: true })
    return code
  }
}

/** Files by the patterns above: a folder (ending in `/`), a glob or a path. */
function matcher(patterns: string[]): (file: string) => boolean {
  const globs = patterns.map((p) => new Bun.Glob(p.endsWith('/') ? `${p}**` : p))
  return (file) => globs.some((g) => g.match(file))
}

/** Test files as bun test takes a path (`./`: the file itself, not a filter its name contains). */
const paths = (files: string[]) => files.map((f) => `./${f}`)

// (the Redis and S3 variables stay set: the scale-out suites of test/cluster use them in both runs)
// A test's own limit, where it gives none: bun's default of 5 s is closer than it looks to a
// test that sleeps through a few seconds of timers on a busy 2-core machine. How fast things are
// is for the benchmarks; a hung test still ends here.
const PER_TEST = ['--timeout', '20000']
// Files whose subject is the HTTP layer, a wire format or the process, never what a store keeps:
// the shared run would run the same code again over another database (what they record is
// checked on the shared stores by the billing, generations and batch suites), so they run once.
const AGNOSTIC = [
  'test/providers/**',
  'test/hardening/idle-connections.test.ts',
  'test/hardening/slow-body.test.ts',
  'test/hardening/many-parts.test.ts',
  'test/hardening/token-counting.test.ts',
  'test/hostile/slow-reader.test.ts',
  // compressed bodies inflated off the request thread: the HTTP layer alone
  'test/hostile/compressed-bombs.test.ts',
  'test/hostile/fragment.test.ts',
  // what a log line is made of: the logger alone
  'test/hostile/log-controls.test.ts',
  // a request's parameters checked before any store is read
  'test/hostile/stream-options.test.ts',
  // the CLI's arguments and what it prints: each CLI run on PostgreSQL is a second of waiting
  'test/hostile/cli-text.test.ts',
  // the journal of batch items sent: a file of the data dir's, no store
  'test/batches/sent-journal.test.ts',
  'test/routing/strict-refs.test.ts',
  'test/routing/strict-fit.test.ts',
  'test/routing/strict-fit-bounds.test.ts',
  'test/routing/strict-fit-clients.test.ts',
  // a schema's translation and its answer's cleanup: what the store holds plays no part
  'test/messages/e2e-gpt-strict-tools.test.ts',
  'test/messages/e2e-gpt-strict-output.test.ts',
  'test/messages/e2e-gpt-strict-zod.test.ts',
  'test/replay/scrub.test.ts',
  'test/billing/held-unbounded.test.ts',
  'test/ui/hostile-strings.test.ts',
  'test/ui/browser-cache.test.ts',
  'test/ui/dashboard.test.ts',
  'test/ui/keys-rotate.test.ts',
  'test/ui/serve.test.ts',
  // a browser's cross-origin questions and the SDKs in a page: the HTTP layer alone
  'test/ui/cross-origin.test.ts',
  // the Redis client and health store against the test Redis itself, whatever the gateway's stores
  'test/cluster/redis-client.test.ts',
  'test/cluster/redis-owner-rewrite.test.ts',
  'test/routing/redis-health.test.ts',
  // timeouts, traces, logs, metrics and a misbehaving upstream: what the store holds plays no part
  'test/routing/stream-idle.test.ts',
  'test/routing/failover.test.ts',
  'test/routing/fallback-fit.test.ts',
  'test/observability/**',
  'test/metrics/prometheus.test.ts',
  'test/hostile/upstream.test.ts',
  'test/routing/rate-limited-retry-after.test.ts',
  // the process: its environment, its log's stdout, the bodies it reads at once
  'test/foundation/start-env.test.ts',
  'test/hardening/stdout-gone.test.ts',
  'test/hardening/body-budget.test.ts',
  // wire formats over HTTP: what a body may hold, values the provider owns, error bodies,
  // translations each way (what they record is checked on both stores by the matrix)
  'test/chat/fuzz.test.ts',
  'test/foundation/owned-values.test.ts',
  'test/foundation/errors.test.ts',
  'test/foundation/parameter-walk.test.ts',
  'test/chat/e2e-claude.test.ts',
  'test/chat/e2e-openai.test.ts',
  'test/messages/e2e-claude.test.ts',
  'test/pipeline/upstream-rules.test.ts',
  'test/pipeline/stream-grammar.test.ts',
  'test/pipeline/thread-rules.test.ts',
  'test/pipeline/openai-schema.test.ts',
  'test/pipeline/whole-and-streamed.test.ts',
  'test/responses/claude-stop-reasons.test.ts',
  'test/responses/claude-citations.test.ts',
  // cassettes live in files of their own (blobs beside them), whatever the gateway's stores
  'test/replay/cassette-modes.test.ts',
  // the token workers' fairness, and the batch pool's messages to its threads
  'test/hardening/token-fairness.test.ts',
  'test/batches/pool-outbox.test.ts',
  // the request thread kept free while the worker pool checks and runs a large batch (a worker's
  // crash on each store is crash.test.ts's)
  'test/batches/engine.test.ts',
  // a results page read a step at a time: the loop kept free is the subject (SQLite's reads are
  // the ones that answer on the loop at once)
  'test/batches/wide-results.test.ts',
  // exports' pages read a turn of the loop each: the same, for exports under way together
  'test/batches/wide-exports.test.ts',
  // no gateway at all: the source's own shape, the bench's scripts, pure functions
  'test/bench/**',
  'test/foundation/import-graph.test.ts',
  'test/foundation/sql-names.test.ts',
  'test/foundation/install-scripts.test.ts',
  'test/foundation/catalog.test.ts',
  'test/foundation/official-params.test.ts',
  'test/foundation/turn.test.ts',
  'test/chat/decode.test.ts',
  'test/chat/rules.test.ts',
  'test/chat/stream.test.ts',
  'test/chat/passthrough.test.ts',
  'test/messages/decode.test.ts',
  'test/messages/encode.test.ts',
  'test/messages/stream.test.ts',
  'test/responses/stream.test.ts',
  'test/routing/choose.test.ts',
  'test/routing/event-splitter.test.ts',
  'test/pipeline/block-boundaries.test.ts',
  'test/replay/match.test.ts',
  'test/metrics/exposition.test.ts',
  'test/media/config.test.ts',
  'test/media/inline-data.test.ts',
]
const STORE_AGNOSTIC = AGNOSTIC.map((p) => `--path-ignore-patterns=${p}`)
// Files whose subject is Redis or S3 failing or shared, not the database beside them: run once,
// on the shared stores, when those are there (the embedded run keeps them otherwise). Limits and
// credits shared on Redis are the same code whichever database keeps the records.
const SHARED_ONLY_FILES = ['test/cluster/redis-faults.test.ts', 'test/cluster/s3-blobs.test.ts', 'test/cluster/redis-shared.test.ts', 'test/cluster/redis-reseed.test.ts']
const SHARED_ONLY = url ? SHARED_ONLY_FILES.map((p) => `--path-ignore-patterns=${p}`) : []
// The scale-out suites on the shared stores (several gateways sharing PostgreSQL, Redis and S3)
// spend most of their time waiting out leases, beats and a stopped process's silence, not on
// the CPU: with no file filter given they run on a lane of their own, in a process of their own,
// beside the embedded run's files that also run on the shared stores (every test has its own
// data dir, schema, Redis key prefix or Redis, so neither sees the other's). Not beside the
// timing suites (STORE_AGNOSTIC), which a second run's gateways beside them pushed past their
// bounds. With them go the rest's longest files that likewise wait most of their time on
// PostgreSQL's side of things (a dead process's lease or lock running out, an outage's
// retries, a lost answer's retry, a database cut mid-batch).
const BESIDE = [
  'test/scaleout/',
  'test/cluster/',
  'test/batches/crash.test.ts',
  'test/generations/lost-commit-answer.test.ts',
  'test/billing/pg-ledger-owners.test.ts',
  'test/generations/spool.test.ts',
  'test/generations/spool-replay.test.ts',
  'test/batches/database-away.test.ts',
]
// The shared run's other files that go on the scale-out part's lane once it ends, so that the
// two lanes end close together (a CI run on 2 cores: the embedded files ~400 s, then these
// ~140 s of the rest beside the rest's other ~220 s; the scale-out part ~440 s).
const REST_BESIDE = ['test/hardening/', 'test/responses/', 'test/foundation/']
const lanes = url && args.length === 0
const embeddedEnv = { ...process.env, SWITCHYARD_TEST_DATABASE_URL: '', SWITCHYARD_TEST_SHARED: '' }
const sharedEnv = { ...process.env, SWITCHYARD_TEST_SHARED: redis || s3 ? '1' : '' }
const stores = ['PostgreSQL', ...(redis ? ['Redis'] : []), ...(s3 ? ['S3'] : [])]
const missing = [...(redis ? [] : ['Redis: SWITCHYARD_TEST_REDIS_URL']), ...(s3 ? [] : ['S3: SWITCHYARD_TEST_S3_ENDPOINT'])]
const sharedTitle = `suites on the shared stores: ${stores.join(' + ')}${missing.length ? ` (not set, so embedded: ${missing.join(', ')})` : ''}`

if (url) {
  // schemas a killed or crashed earlier run left behind (tests name theirs sy_t_…); only when
  // no other test run holds the run lock (test/helpers/database.ts): theirs are in use
  const admin = new SQL({ url, max: 1 })
  try {
    const [{ alone }] = (await admin.unsafe(`SELECT pg_try_advisory_lock(${RUN_LOCK}) AS alone`)) as { alone: boolean }[]
    if (alone) {
      const left = (await admin.unsafe("SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'sy\\_t\\_%'")) as { name: string }[]
      for (const { name } of left) await admin.unsafe(`DROP SCHEMA "${name}" CASCADE`).catch((e) => console.log(`(left schema ${name}: ${e.message})`))
      await admin.unsafe(`SELECT pg_advisory_unlock(${RUN_LOCK})`)
    } else console.log('(another test run is using this database: the schemas left behind are kept this time)')
  } finally {
    await admin.close()
  }
}
let embedded = 0
let shared = 0
if (lanes) {
  // npm test with no file named, the shared stores set (CI): two lanes on two cores. First, alone,
  // the files whose subject is timing on the one machine (STORE_AGNOSTIC: the loop kept free, p99
  // bounds, idle timeouts), which another run's gateways beside them pushed past their bounds.
  // Then the embedded run's other files, then part of the shared run's rest, on one lane; the
  // scale-out part, then the rest of the rest, on the other. The files of the second phase are
  // the ones that already ran beside another run (on the shared stores) before it was split so.
  const files = [...new Bun.Glob('test/**/*.test.{ts,tsx}').scanSync('.')].sort()
  const agnostic = matcher(AGNOSTIC)
  const sharedOnly = matcher(SHARED_ONLY_FILES)
  const besideFiles = matcher(BESIDE)
  const restBeside = matcher(REST_BESIDE)
  const onShared = files.filter((f) => !agnostic(f))
  const rest = onShared.filter((f) => !besideFiles(f))
  const embeddedTitle = 'suites on the embedded stores (SQLite, local disk, memory)'
  embedded = await run(`${embeddedTitle}: those whose subject is timing, alone`, embeddedEnv, [...PER_TEST, ...paths(files.filter((f) => agnostic(f) && !sharedOnly(f)))])
  const other = runBeside([
    [`${sharedTitle}: the scale-out part, run beside the rest`, sharedEnv, [...PER_TEST, ...paths(onShared.filter(besideFiles))]],
    [`${sharedTitle}: part of the rest, after the scale-out part`, sharedEnv, [...PER_TEST, ...paths(rest.filter(restBeside))]],
  ])
  embedded = (await run(`${embeddedTitle}: the others, beside the scale-out part`, embeddedEnv, [...PER_TEST, ...paths(onShared.filter((f) => !sharedOnly(f)))])) || embedded
  const code = await run(`${sharedTitle}: the rest`, sharedEnv, [...PER_TEST, ...paths(rest.filter((f) => !restBeside(f)))])
  shared = (await other()) || code
} else {
  embedded = await run('suites on the embedded stores (SQLite, local disk, memory)', embeddedEnv, [...PER_TEST, ...SHARED_ONLY])
  if (url) shared = await run(sharedTitle, sharedEnv, [...PER_TEST, ...STORE_AGNOSTIC])
  else console.log('\n== suites on the shared stores: skipped, SWITCHYARD_TEST_DATABASE_URL is not set\n')
}
process.exit(embedded !== 0 ? embedded : shared)
