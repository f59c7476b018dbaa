// The CLI: serve (default) | keys … | batches watch ID | config | migrate | version. Run by main.ts.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pkg from '../package.json' with { type: 'json' }
import { publicKey } from './auth/admin.ts'
import { KeyStore, MAX_CREDITS, MAX_GRACE_SECONDS, MAX_RPM } from './auth/keys.ts'
import { KEY_TEXT_MAX, keyTextFault } from './auth/key-text.ts'
import { announceKeyChange } from './cluster/key-changes.ts'
import { buildCatalog, deploymentTable } from './config/catalog.ts'
import { ConfigError, loadConfig, maskedConfig, maskUrl, storesOf, type Config } from './config/load.ts'
import { StartError } from './config/errors.ts'
import { familyProvider } from './config/providers.ts'
import { openStorage } from './db/client.ts'
import { storageOptions } from './db/options.ts'
import { ensureStartEnv } from './runtime/start-env.ts'
import { watchBatch } from './batches/watch.ts'
import { HttpError } from './http/errors.ts'
import { terminalText } from './http/log.ts'

const USAGE = `switchyard ${pkg.version} — a self-hosted model gateway

Usage:
  switchyard [serve] [--host H] [--port P] [--data-dir D] [--config F] [--log-level L] [--log-format json|text]
                   [--record DIR | --replay DIR]   write upstream exchanges to cassettes in DIR, or answer from them
  switchyard keys create --name N [--account A] [--credits USD] [--rpm N] [--json]
  switchyard keys list [--json]
  switchyard keys disable ID | keys enable ID | keys credit ID AMOUNT
  switchyard keys rotate ID [--grace SECONDS] [--json]   a new secret for the key (shown once); the old one
                   stops working at once, or after SECONDS (at most 30 days)
  switchyard keys revoke-previous ID   the old secret a rotation's grace period keeps stops working now
  switchyard batches watch ID   a batch's progress until it ends (exit 1 if it failed or expired)
  switchyard config        print the effective config, secrets masked
  switchyard migrate       create or migrate the database (the data dir's, or database.url) and exit
  switchyard version
`

const OPTIONS = {
  host: { type: 'string' },
  port: { type: 'string' },
  'data-dir': { type: 'string' },
  config: { type: 'string' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
  record: { type: 'string' },
  replay: { type: 'string' },
  name: { type: 'string' },
  account: { type: 'string' },
  credits: { type: 'string' },
  rpm: { type: 'string' },
  grace: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const

class UsageError extends Error {}

/** A number as an operator writes one in decimal (`5`, `0.25`, `1e2`): Number() alone took `0x10` as 16 USD, `0b1` and ` 5` too. */
const DECIMAL = /^(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i

function positiveNumber(v: string | undefined, name: string, integer = false): number | undefined {
  if (v === undefined) return undefined
  const n = Number(v)
  // an integer in plain digits (`1e3` or ` 5` is no count of requests)
  if (!DECIMAL.test(v) || !Number.isFinite(n) || n < 0 || (integer && (!/^\d+$/.test(v) || n < 1))) {
    throw new UsageError(`--${name}: expected a ${integer ? 'positive integer' : 'non-negative number'}, got "${v}"`)
  }
  return n
}

/** How long a rotated key's old secret keeps working, in seconds, as the admin API takes it (0: not at all). */
function graceOf(v: string | undefined): number {
  if (v === undefined) return 0
  const n = Number(v)
  if (!/^\d+$/.test(v) || n > MAX_GRACE_SECONDS) throw new UsageError(`--grace: expected a whole number of seconds, 0 to ${MAX_GRACE_SECONDS} (30 days), got "${v}"`)
  return n
}

/** USD a key may hold, as the admin API takes it. */
function credits(n: number | undefined, name: string): number | undefined {
  if (n !== undefined && n > MAX_CREDITS) throw new UsageError(`--${name}: at most ${MAX_CREDITS} USD, got ${n}`)
  return n
}

/** Requests a minute, as the admin API takes them. */
function rpmOf(n: number | undefined): number | undefined {
  if (n !== undefined && n > MAX_RPM) throw new UsageError(`--rpm: at most ${MAX_RPM}, got ${n}`)
  return n
}

/** `--account`: one a report can name again (not blank). */
function accountOf(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined
  if (v.trim() === '') throw new UsageError('--account: must not be blank')
  return v
}

async function serve(config: Config) {
  // returns only once the limit and the start settings are in force (the process re-executes
  // itself to set them) or cannot be
  const limit = await ensureStartEnv(config.maxUpstreamConnections)
  // the server's modules load after a re-execution, not before it as well
  const { startServer } = await import('./server.ts')
  const running = await startServer(config)
  if (!limit.applied) running.services.log.warn(`upstream calls beyond Bun's default of 256 at once will queue in the fetch client`, { reason: limit.reason })
  const { services: s } = running
  const served = (family: 'openai' | 'anthropic') => {
    const p = familyProvider(config.providers, family)
    return p ? `upstream ${maskUrl(p.baseUrl)}${p.id === family ? '' : ` (${p.id})`}` : 'the built-in mock provider (no upstream configured)'
  }
  const lines = [
    `switchyard ${pkg.version} listening on ${running.url}`,
    `  data dir: ${config.dataDir}${config.source ? `   config: ${config.source}` : ''}`,
    `  database: ${s.storage.describe}`,
    `  OpenAI-family models    → ${served('openai')}`,
    `  Anthropic-family models → ${served('anthropic')}`,
    `  OpenAI SDKs: baseURL ${running.url}/api/alpha/v1   Anthropic SDKs: baseURL ${running.url}/api/beta`,
    `  dashboard: ${running.url}/ui   sign in with ${config.adminToken ? 'the admin token (SWITCHYARD_ADMIN_TOKEN or server.admin_token)' : 'a gateway key sk-sy-… (with SWITCHYARD_ADMIN_TOKEN set, the admin token manages keys there)'}`,
    ...(config.replay ? [`  cassettes: ${config.replay.mode} ${config.replay.dir}`] : []),
    ...Object.entries(storesOf(config)).filter(([concern]) => concern !== 'database').map(([concern, store]) => `  ${concern.replace('_', ' ').padEnd(11)} → ${store}`),
  ]
  if (running.bootstrapKey) {
    lines.push(
      config.bootstrapKey
        ? `  API key: created from SWITCHYARD_BOOTSTRAP_KEY`
        : `  API key (shown once, store it now): ${running.bootstrapKey}`,
    )
  }
  const shutdown = async (signal: string) => {
    s.log.info('shutting down', { signal })
    await running.stop()
    process.exit(0)
  }
  // before the banner: whoever reads "listening on" may send SIGTERM at once
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  process.once('SIGINT', () => void shutdown('SIGINT'))
  // a closed terminal or SSH session: the same graceful stop, not a cut that loses the last records
  process.once('SIGHUP', () => void shutdown('SIGHUP'))
  process.stdout.write(lines.join('\n') + '\n')
}

/**
 * The SQLite database a command that reads or changes what is there must find: a mistyped data
 * dir would otherwise get a new empty database, and `keys list` would answer "no keys".
 */
function existingDatabase(config: Config, command: string): void {
  if (config.database.url) return
  const file = join(config.dataDir, 'switchyard.db')
  if (!existsSync(file)) throw new UsageError(`${command}: data dir ${config.dataDir} has no database (${file}); is the path right? serve, migrate or keys create makes one`)
}

async function keysCommand(config: Config, args: string[], v: Record<string, string | boolean | undefined>) {
  const [sub, id, amount] = args
  if (!['create', 'list', 'disable', 'enable', 'credit', 'rotate', 'revoke-previous'].includes(sub ?? '')) throw new UsageError(`unknown keys command "${sub ?? ''}"`)
  if (sub === 'create') {
    if (!config.database.url && !existsSync(join(config.dataDir, 'switchyard.db'))) console.error(`switchyard: a new database in data dir ${config.dataDir}`)
  } else existingDatabase(config, `keys ${sub ?? ''}`.trim())
  const storage = await openStorage(storageOptions(config))
  const keys = new KeyStore(storage)
  // running instances hear of the change at once on their bus (Redis, or LISTEN/NOTIFY)
  const told: Promise<void>[] = []
  keys.onChange = (keyId) => void told.push(announceKeyChange(config, storage, keyId).catch(() => {}))
  const need = (x: string | undefined, what: string) => {
    if (!x) throw new UsageError(`keys ${sub}: missing ${what}`)
    return x
  }
  const show = (k: Awaited<ReturnType<KeyStore['get']>>, kid: string) => {
    if (!k) throw new UsageError(`no key with id ${kid}`)
    const p = publicKey(k)
    console.log(v.json ? JSON.stringify(p) : `${p.id}  ${p.status}  credits=${p.credits ?? 'unlimited'}  spent=${p.spent}`)
  }
  try {
    switch (sub) {
      case 'create': {
        const name = v.name
        if (typeof name !== 'string' || name === '') throw new UsageError('keys create: --name is required')
        // what the admin routes take, the same rules: text an operator reads back
        const account = typeof v.account === 'string' ? v.account : undefined
        const fault = keyTextFault({ name, account })
        if (fault) throw new UsageError(`keys create: --${fault}`)
        for (const [flag, text] of [['name', name], ['account', account]] as const) {
          if (text !== undefined && text.length > KEY_TEXT_MAX) throw new UsageError(`keys create: --${flag}: at most ${KEY_TEXT_MAX} characters`)
        }
        const { key, record } = await keys.create({
          name,
          account: accountOf(v.account),
          credits: credits(positiveNumber(v.credits as string | undefined, 'credits'), 'credits'),
          rpm: rpmOf(positiveNumber(v.rpm as string | undefined, 'rpm', true)),
        })
        if (v.json) console.log(JSON.stringify({ ...publicKey(record), key }))
        else console.log(`${key}\n  id ${record.id}, account ${record.account}, credits ${record.credits ?? 'unlimited'}; the key is shown once`)
        return
      }
      case 'list': {
        const all = await keys.list()
        if (v.json) return console.log(JSON.stringify(all.map(publicKey)))
        if (all.length === 0) return console.log('no keys')
        for (const k of all) {
          const p = publicKey(k)
          const previous = p.previous_key_expires_at === null ? '' : `  old secret until ${new Date(p.previous_key_expires_at * 1000).toISOString()}`
          console.log(`${k.id}  ${k.keyPrefix}…  ${k.status.padEnd(8)}  account=${terminalText(k.account)}  name=${terminalText(k.name)}  credits=${p.credits ?? 'unlimited'}  spent=${k.spent.toFixed(6)}  rpm=${k.rpm ?? 'default'}${previous}`)
        }
        return
      }
      case 'disable':
      case 'enable':
        return show(await keys.update(need(id, 'ID'), { status: sub === 'disable' ? 'inactive' : 'active' }), id!)
      case 'rotate': {
        const grace = graceOf(v.grace as string | undefined)
        const made = await keys.rotate(need(id, 'ID'), grace * 1000)
        if (!made) throw new UsageError(`no key with id ${id}`)
        const { key, record } = made
        const p = publicKey(record)
        const until = p.previous_key_expires_at
        const old = until === null ? 'the old secret no longer works' : `the old secret works until ${new Date(until * 1000).toISOString()}`
        if (v.json) console.log(JSON.stringify({ ...p, key }))
        else console.log(`${key}\n  id ${record.id}, ${record.status}; ${old}; the new one is shown once`)
        return
      }
      case 'revoke-previous':
        return show(await keys.revokePrevious(need(id, 'ID')), id!)
      case 'credit': {
        const n = credits(positiveNumber(need(amount, 'AMOUNT'), 'amount'), 'amount')!
        if (!(n > 0)) throw new UsageError('keys credit: AMOUNT must be greater than 0')
        return show(await keys.credit(need(id, 'ID'), n), id!)
      }
      default:
        throw new UsageError(`unknown keys command "${sub ?? ''}"`)
    }
  } finally {
    await Promise.all(told)
    await storage.close()
  }
}

async function batchesCommand(config: Config, args: string[]) {
  const [sub, id] = args
  if (sub !== 'watch') throw new UsageError(`unknown batches command "${sub ?? ''}" (batches watch ID)`)
  if (!id) throw new UsageError('batches watch: missing ID')
  existingDatabase(config, 'batches watch')
  const storage = await openStorage(storageOptions(config))
  try {
    const code = await watchBatch({ storage, id, tty: process.stdout.isTTY === true, write: (t) => void process.stdout.write(t) })
    if (typeof code === 'string') {
      console.error(`switchyard: ${code}`)
      return process.exit(1)
    }
    process.exitCode = code
  } finally {
    await storage.close()
  }
}

export async function main(argv: string[]) {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true })
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${USAGE}`)
    return process.exit(2)
  }
  const { values: v, positionals } = parsed
  const [command = 'serve', ...rest] = positionals
  if (v.help) return console.log(USAGE)
  if (command === 'version') return console.log(pkg.version)
  let config: Config | undefined
  try {
    config = loadConfig({ flags: v })
    switch (command) {
      case 'serve':
        return await serve(config)
      case 'keys':
        return await keysCommand(config, rest, v)
      case 'batches':
        return await batchesCommand(config, rest)
      case 'config':
        // the providers with their keys masked, then where each configured model is served
        return console.log(JSON.stringify({ ...maskedConfig(config), deployments: deploymentTable(config, buildCatalog(config)) }, null, 2))
      case 'migrate': {
        const storage = await openStorage(storageOptions(config))
        await storage.close()
        return console.log(`migrated ${storage.describe}`)
      }
      default:
        throw new UsageError(`unknown command "${command}"`)
    }
  } catch (e) {
    if (e instanceof ConfigError || e instanceof StartError || e instanceof UsageError || e instanceof HttpError) {
      console.error(`switchyard: ${e.message}`)
      return process.exit(e instanceof UsageError ? 2 : 1)
    }
    const said = startFailure(e, config)
    if (said) {
      console.error(`switchyard: ${said}`)
      return process.exit(1)
    }
    throw e
  }
}

/** What the system or SQLite said when the data dir or a file cannot be had, by its code: what it means for the operator. */
const FAILURES: Record<string, string> = {
  SQLITE_NOTADB: 'its database file is not a SQLite database',
  SQLITE_CORRUPT: 'its database file is damaged; restore it from a backup',
  SQLITE_CANTOPEN: 'its database file cannot be opened (a directory that is read-only or not there?)',
  SQLITE_READONLY: 'its database file is read-only',
  SQLITE_FULL: 'the disk is full',
  SQLITE_IOERR: 'reading or writing its database file failed',
  EEXIST: 'a file stands where a directory must be',
  ENOTDIR: 'a file stands where a directory must be',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOSPC: 'the disk is full',
  EISDIR: 'a directory where a file was expected',
}

/** A start that failed on the data dir or a file: one line naming it, not a stack trace. */
function startFailure(e: unknown, config: Config | undefined): string | undefined {
  const code = (e as { code?: unknown })?.code
  if (typeof code !== 'string' || !Object.hasOwn(FAILURES, code)) return undefined
  const where = code.startsWith('SQLITE_') && config ? `data dir ${config.dataDir}: ` : ''
  const message = String((e as Error)?.message ?? '')
  return `${where}${FAILURES[code]} (${message.startsWith(code) ? message : `${code}: ${message}`})`
}

