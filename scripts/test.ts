// `npm test`: the suites on the embedded stores (SQLite, local disk), then once more on
// PostgreSQL when SWITCHYARD_TEST_DATABASE_URL is set (every gateway a test starts gets a
// schema of its own there: test/helpers/database.ts). Arguments go to both runs.
const args = process.argv.slice(2)
const url = process.env.SWITCHYARD_TEST_DATABASE_URL

function run(title: string, env: Record<string, string | undefined>, extra: string[] = []): number {
  console.log(`\n== ${title}\n`)
  const p = Bun.spawnSync([process.execPath, 'test', ...extra, ...args], { env, stdio: ['inherit', 'inherit', 'inherit'] })
  return p.exitCode ?? 1
}

const embedded = run('suites on the embedded stores (SQLite)', { ...process.env, SWITCHYARD_TEST_DATABASE_URL: '' })
let shared = 0
if (url) {
  // a gateway on PostgreSQL starts in a few hundred ms more than on SQLite: the per-test limit is wider
  shared = run('suites on PostgreSQL (SWITCHYARD_TEST_DATABASE_URL)', process.env, ['--timeout', '20000'])
} else {
  console.log('\n== suites on PostgreSQL: skipped, SWITCHYARD_TEST_DATABASE_URL is not set\n')
}
process.exit(embedded !== 0 ? embedded : shared)
