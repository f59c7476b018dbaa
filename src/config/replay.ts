// Cassettes (`replay:` in the config file, SWITCHYARD_REPLAY_MODE / SWITCHYARD_REPLAY_DIR, or
// `serve --record DIR` / `--replay DIR`): upstream exchanges written to a directory and
// answered from it later, so a test suite runs against real model outputs with no provider
// and no key (src/replay).
import { t, type Static } from 'elysia'
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { ConfigError } from './errors.ts'

export const REPLAY_MODES = ['record', 'replay', 'record-missing'] as const
export type ReplayMode = (typeof REPLAY_MODES)[number]

export const ReplaySchema = t.Object(
  {
    /** `record`: send upstream and write each exchange; `replay`: answer from the cassettes, never upstream; `record-missing`: replay what is there, record the rest. */
    mode: t.Optional(t.Union(REPLAY_MODES.map((m) => t.Literal(m)))),
    /** The cassettes' directory (relative to the working directory). */
    dir: t.Optional(t.String({ minLength: 1 })),
    match: t.Optional(
      t.Object(
        {
          /** Upstream body fields (dotted paths, `*` for any key or index) that do not decide whether two requests are the same. */
          ignore: t.Optional(t.Array(t.String({ minLength: 1 }))),
          /** Regular expressions: text of the upstream body they match does not decide it either (a date, a checkout path in a prompt). */
          patterns: t.Optional(t.Array(t.String({ minLength: 1 }))),
        },
        { additionalProperties: false },
      ),
    ),
    /** Replayed streams keep their recorded spacing divided by this (1: real time); unset: as fast as possible. */
    speed: t.Optional(t.Number({ exclusiveMinimum: 0 })),
    /** Replayed calls are priced as the upstream's would be (default: they cost 0). */
    bill: t.Optional(t.Boolean()),
  },
  { additionalProperties: false },
)

export interface ReplaySettings {
  mode: ReplayMode
  /** Absolute. */
  dir: string
  ignore: string[]
  /** Regular expressions (checked): text they match is replaced before a request's match key is taken (and in the request as kept). */
  patterns: string[]
  /** Undefined: no waiting between replayed events. */
  speed?: number
  bill: boolean
}

type Flags = Record<string, string | boolean | undefined>
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined)

/** Flags (`--record DIR`, `--replay DIR`) > env > the file; null when no cassettes are used. */
export function replaySettings(f: Static<typeof ReplaySchema> | undefined, env: Record<string, string | undefined>, flags: Flags, cwd: string): ReplaySettings | null {
  const record = str(flags.record)
  const replay = str(flags.replay)
  if (record && replay) throw new ConfigError('--record and --replay: give one of them')
  const flagged = record ? { mode: 'record', dir: record } : replay ? { mode: 'replay', dir: replay } : undefined
  const mode = flagged?.mode ?? str(env.SWITCHYARD_REPLAY_MODE) ?? f?.mode
  const dir = flagged?.dir ?? str(env.SWITCHYARD_REPLAY_DIR) ?? f?.dir
  if (mode === undefined && dir === undefined) return null
  if (!REPLAY_MODES.includes(mode as ReplayMode) && mode !== undefined) throw new ConfigError(`replay.mode: expected one of ${REPLAY_MODES.join(', ')}, got "${mode}"`)
  if (dir === undefined) throw new ConfigError(`replay.dir: required with replay.mode ${mode} (or SWITCHYARD_REPLAY_DIR)`)
  const settings: ReplaySettings = {
    // a directory alone replays: the mode that never reaches an upstream
    mode: (mode as ReplayMode | undefined) ?? 'replay',
    dir: resolve(cwd, dir),
    ignore: f?.match?.ignore ?? [],
    patterns: (f?.match?.patterns ?? []).map(checked),
    speed: f?.speed,
    bill: f?.bill ?? false,
  }
  if (settings.mode === 'replay' && !existsSync(settings.dir)) throw new ConfigError(`replay.dir: ${settings.dir} does not exist (nothing to replay; record it first with --record)`)
  return settings
}

function checked(source: string, i: number): string {
  try {
    new RegExp(source, 'g')
    return source
  } catch (e) {
    throw new ConfigError(`replay.match.patterns[${i}]: not a regular expression (${(e as Error).message})`)
  }
}

/** Cassettes answer for the upstreams (replay, record-missing): a family with no key is still served by its provider, not the mock. */
export function answersOffline(r: ReplaySettings | null): boolean {
  return r !== null && r.mode !== 'record'
}
