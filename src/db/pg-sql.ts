// The Sql seam on PostgreSQL through Bun.SQL: `?` placeholders become `$1…`, and int8 values
// (epoch ms, counts) come back as numbers. The client is made with `bigint: true`, so an
// int8 arrives as a BigInt and nothing else does: the conversion never touches a text column.
import type { SQL } from 'bun'
import type { Param, Sql } from './sql.ts'

const texts = new Map<string, string>()

/** `?` → `$n`, outside quoted strings and identifiers. Cached: the store's statements are few. */
export function numbered(text: string): string {
  let out = texts.get(text)
  if (out !== undefined) return out
  let n = 0
  let quote: string | null = null
  out = ''
  for (const ch of text) {
    if (quote) {
      if (ch === quote) quote = null
    } else if (ch === "'" || ch === '"') quote = ch
    else if (ch === '?') {
      out += '$' + ++n
      continue
    }
    out += ch
  }
  if (texts.size > 1000) texts.clear()
  texts.set(text, out)
  return out
}

function plain<T>(rows: Record<string, unknown>[]): T[] {
  for (const r of rows) for (const k in r) if (typeof r[k] === 'bigint') r[k] = Number(r[k])
  return rows as T[]
}

export class PgSql implements Sql {
  readonly dialect = 'pg' as const

  constructor(readonly client: SQL, private readonly inTx = false) {}

  async all<T>(text: string, params: readonly Param[] = []): Promise<T[]> {
    const rows = await this.client.unsafe(numbered(text), params as Param[])
    return plain<T>([...rows])
  }

  async get<T>(text: string, params?: readonly Param[]): Promise<T | null> {
    return (await this.all<T>(text, params))[0] ?? null
  }

  async run(text: string, params: readonly Param[] = []): Promise<number> {
    const r = (await this.client.unsafe(numbered(text), params as Param[])) as unknown as { count: number }
    return r.count
  }

  async tx<T>(fn: (q: Sql) => Promise<T>, committed?: (out: T) => void): Promise<T> {
    // a transaction inside one is part of it
    const out = this.inTx ? await fn(this) : ((await this.client.begin((tx) => fn(new PgSql(tx as unknown as SQL, true)))) as T)
    committed?.(out)
    return out
  }
}
