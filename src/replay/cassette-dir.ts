// A directory of cassettes: which file an exchange belongs to (the test's own, named by
// `x-switchyard-cassette`, or its model's), the match key of a request, the recordings of each
// key in order with a cursor per key, and the writing of new ones.
//
// Files are read once, when first needed (one not there is looked for again until it is), and
// written synchronously, line by line: an exchange is on disk by the time its last byte reaches
// the client, so a gateway stopped right after a test has written everything the test saw. A `record` run starts each file it
// writes afresh (keeping only what was recorded since the run began: a batch worker thread
// may have written there first); `record-missing` adds to it.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Exchange } from '../providers/http.ts'
import { matchKey, normalize } from './match.ts'
import { Blobs, unreadable, type BodyPart, type CassetteEntry, type RecordedResponse } from './cassette.ts'
import { scrubJson, type Scrub } from './cassette-scrub.ts'

/** What a `match.patterns` match becomes in a request. */
export const MASKED = '[ignored]'

/** A request as the cassettes see it: its file, its match key, its normalised body. */
export interface CassetteRequest {
  file: string
  key: string
  path: string
  body: unknown
  model?: string
  provider: string
}

interface FileIndex {
  entries: CassetteEntry[]
  byKey: Map<string, CassetteEntry[]>
  /** How many recordings of each key were used. */
  used: Map<string, number>
  /** Written to in this run (a record run has started it afresh). */
  written: boolean
}

/** A model id as a file name (ids may hold `/` or `:`). */
function modelFile(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[._-]+/, '') || 'model'
}

export class CassetteDir {
  private readonly files = new Map<string, FileIndex>()
  readonly blobs: Blobs
  private readonly patterns: RegExp[]

  constructor(
    readonly dir: string,
    /** What does not decide a match: body fields (`ignore`), and text `patterns` match (replaced by MASKED). */
    private readonly match: { ignore: readonly string[]; patterns: readonly string[] },
    readonly scrub: Scrub,
    private readonly opts: {
      /** Only writes: what the files hold is never read. */
      writeOnly?: boolean
      /** When the record run began (epoch ms): the first write to a file drops what it held from before. */
      freshSince?: number
    } = {},
  ) {
    this.blobs = new Blobs(dir)
    this.patterns = match.patterns.map((p) => new RegExp(p, 'g'))
  }

  requestOf(exchange: Exchange): CassetteRequest {
    const raw = typeof exchange.body === 'string' ? parsed(exchange.body) : exchange.body.json
    const body = this.normalized(scrubJson(raw, this.scrub))
    const model = exchange.ctx?.model.id
    const name = exchange.ctx?.cassette ?? (model ? modelFile(model) : modelFile(exchange.provider))
    return { file: `${name}.jsonl`, key: this.keyOf(exchange.path, body), path: exchange.path, body, model, provider: exchange.provider }
  }

  /** A (scrubbed) body as its match sees it: patterns masked, ignored fields out, keys sorted. */
  private normalized(body: unknown): unknown {
    const patterns = this.patterns
    const masked = patterns.length === 0 ? body : scrubJson(body, (s) => patterns.reduce((t, re) => t.replace(re, MASKED), s))
    return normalize(masked, this.match.ignore)
  }

  private keyOf(path: string, normalized: unknown): string {
    return matchKey({ path, body: normalized }, this.match.ignore)
  }

  /**
   * The next recording of the request's key, in recorded order; undefined when none is left.
   * `wrap`: past the last, the first again (a suite run twice against one gateway replays the
   * same way twice).
   */
  take(req: CassetteRequest, wrap: boolean): CassetteEntry | undefined {
    const f = this.load(req.file)
    const list = f.byKey.get(req.key)
    if (!list) return undefined
    const n = f.used.get(req.key) ?? 0
    if (n >= list.length && !wrap) return undefined
    f.used.set(req.key, n + 1)
    return list[n % list.length]
  }

  /** The recordings of a file (for a miss: the nearest one). */
  entries(file: string): readonly CassetteEntry[] {
    return this.load(file).entries
  }

  /** The normalised body of a recording (read from its blob if need be). */
  bodyOf(e: CassetteEntry): unknown {
    return e.request.blob ? (this.blobs.read(e.request.blob) as { body: unknown }).body : e.request.body
  }

  /** The body part of a recorded response (read from its blob if need be). */
  partOf(r: RecordedResponse): BodyPart {
    return 'blob' in r ? (this.blobs.read(r.blob) as BodyPart) : r
  }

  /** Writes a new exchange; it counts as used (the request that made it had it as its answer). */
  append(req: CassetteRequest, entry: CassetteEntry): void {
    const f = this.load(req.file)
    const line = JSON.stringify(entry) + '\n'
    const path = join(this.dir, req.file)
    mkdirSync(this.dir, { recursive: true })
    const since = this.opts.freshSince
    if (since !== undefined && !f.written) writeFileSync(path, linesSince(path, since) + line)
    else appendFileSync(path, line)
    f.written = true
    this.files.set(req.file, f)
    index(f, entry)
    f.used.set(entry.key, (f.used.get(entry.key) ?? 0) + 1)
  }

  /** How many files' recordings are held in memory. */
  get held(): number {
    return this.files.size
  }

  private load(file: string): FileIndex {
    let f = this.files.get(file)
    if (f) return f
    f = { entries: [], byKey: new Map(), used: new Map(), written: false }
    const path = join(this.dir, file)
    // a file that is not there is looked for again next time, not held as empty: its name is
    // whatever a client sent (x-switchyard-cassette, a model id of its own), and each such
    // miss held an index for good
    if (!this.opts.writeOnly && !existsSync(path)) return f
    this.files.set(file, f)
    if (this.opts.writeOnly) return f
    for (const [i, line] of readFileSync(path, 'utf8').split('\n').entries()) {
      if (line.trim() === '') continue
      let e: CassetteEntry
      try {
        e = JSON.parse(line)
      } catch {
        throw unreadable(`cassette ${path}: line ${i + 1} is not JSON`)
      }
      // the key is taken again: a match.ignore or pattern added since the recording applies to it too
      e.key = this.keyOf(e.request.path, this.normalized(this.bodyOf(e)))
      index(f, e)
    }
    return f
  }
}

/** The lines of a cassette file recorded at or after `since`. */
function linesSince(path: string, since: number): string {
  if (!existsSync(path)) return ''
  const kept = readFileSync(path, 'utf8').split('\n').filter((line) => {
    try {
      return line.trim() !== '' && Date.parse((JSON.parse(line) as CassetteEntry).at) >= since
    } catch {
      return false
    }
  })
  return kept.map((l) => l + '\n').join('')
}

function index(f: FileIndex, e: CassetteEntry): void {
  f.entries.push(e)
  const list = f.byKey.get(e.key)
  if (list) list.push(e)
  else f.byKey.set(e.key, [e])
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
