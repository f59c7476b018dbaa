// A data dir (or PostgreSQL schema) that a newer Switchyard migrated: this version's migrator
// would find nothing to do and start, then fail on tables it does not know and lose what it
// accepted (a row written to a table since dropped). So it refuses to start, naming why.
import { ConfigError } from '../config/errors.ts'
import type { Migration } from './migrations.gen.ts'

/** Throws when the newest migration the database records is past the newest this binary carries. */
export function refuseNewerSchema(applied: unknown, known: readonly Migration[], where: string): void {
  const newest = known.at(-1)
  const at = applied === null || applied === undefined ? NaN : Number(applied)
  if (!newest || !Number.isFinite(at) || at <= newest.when) return
  throw new ConfigError(
    `${where} was migrated by a newer Switchyard (its schema is past this version's last migration, ${newest.tag}): run that version or a newer one on it; this one would misread it and could lose what it accepts`,
  )
}
