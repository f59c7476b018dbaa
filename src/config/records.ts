// How long generation records are kept, and how many may wait for a database that cannot take
// them (`records:` in the config file). `generations:` is the older name of the same section
// and SWITCHYARD_RETENTION_DAYS the older name of SWITCHYARD_RECORDS_RETENTION_DAYS: both still
// work, the new name winning when both are given.
import { t, type Static } from 'elysia'
import { Int } from '../lib/int.ts'
import { ConfigError } from './errors.ts'
import { DEFAULT_RETENTION_DAYS, MIN_RETENTION_DAYS } from './retention.ts'

export const RecordsSchema = t.Object(
  {
    /** Days a record is kept before it is pruned (the hourly usage rollup is kept). */
    retention_days: t.Optional(t.Number({ minimum: MIN_RETENTION_DAYS })),
    /** Records waiting for a database that cannot take them: past this, new generations get 507. */
    max_backlog: t.Optional(Int({ minimum: 1 })),
  },
  { additionalProperties: false },
)

type Section = Static<typeof RecordsSchema> | undefined

export interface RecordSettings {
  retentionDays: number
  maxBacklog: number
}

/** The first of the environment's names that is set, as a number, refused below `min` naming it. */
function fromEnv(env: Record<string, string | undefined>, names: string[], min: number): number | undefined {
  for (const name of names) {
    const v = env[name]
    if (v === undefined || v === '') continue
    // plain decimal, as every other number of the environment (0x10, 1e3 and " 8" are no days)
    const n = /^\d+(\.\d+)?$/.test(v) ? Number(v) : NaN
    if (!Number.isFinite(n) || n < min) throw new ConfigError(`${name}: expected a plain decimal number ≥ ${min}, got "${v}"`)
    return n
  }
  return undefined
}

export function recordSettings(records: Section, generations: Section, env: Record<string, string | undefined>): RecordSettings {
  const retention = fromEnv(env, ['SWITCHYARD_RECORDS_RETENTION_DAYS', 'SWITCHYARD_RETENTION_DAYS'], MIN_RETENTION_DAYS) ?? records?.retention_days ?? generations?.retention_days
  const backlog = fromEnv(env, ['SWITCHYARD_RECORDS_MAX_BACKLOG'], 0) ?? records?.max_backlog ?? generations?.max_backlog ?? 10_000
  return { retentionDays: retention ?? DEFAULT_RETENTION_DAYS, maxBacklog: Math.max(1, Math.floor(backlog)) }
}
