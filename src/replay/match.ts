// What makes two upstream requests "the same" for a cassette or the response cache: the
// request the gateway sends upstream (after its own decoding and translation), with what
// changes from run to run left out — key order, whitespace, the fields named volatile below
// or in config (`match.ignore`). Two runs of one test through different SDK versions then
// send the same key.

/** Fields that differ between runs of the same request, as dotted paths into the upstream body. */
export const VOLATILE: readonly string[] = [
  'metadata.user_id',
  'stream_options',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  // the Responses API's client bookkeeping (Codex sends its turn ids there, new each run)
  'client_metadata',
  // ids a client gives its own input items (Codex: `msg_<uuid>`, `fco_<uuid>`, new each run); the
  // ids of items the model made come back the same from a replay, and say nothing of the request.
  // An `item_reference`'s id is all it says: that one is kept (strip)
  'input.*.id',
]

export interface MatchInput {
  /** The upstream path, query included (`/v1/chat/completions`, `/openai/deployments/x/chat/completions?api-version=…`). */
  path: string
  body: unknown
}

/**
 * The request as its match sees it: a JSON value with sorted keys and the ignored paths removed.
 * `ignore` adds dotted paths to VOLATILE (`messages.0.content` names an array's item by index;
 * `*` matches any one key or index).
 */
export function normalize(body: unknown, ignore: readonly string[] = []): unknown {
  const paths = [...VOLATILE, ...ignore].map((p) => p.split('.'))
  return strip(body, paths)
}

function strip(v: unknown, paths: string[][]): unknown {
  if (Array.isArray(v)) return v.map((item, i) => strip(item, below(paths, String(i))))
  if (typeof v !== 'object' || v === null) return v
  const out: Record<string, unknown> = {}
  const reference = (v as { type?: unknown }).type === 'item_reference'
  for (const k of Object.keys(v).sort()) {
    if (!(reference && k === 'id') && paths.some((p) => p.length === 1 && (p[0] === k || p[0] === '*'))) continue
    out[k] = strip((v as Record<string, unknown>)[k], below(paths, k))
  }
  return out
}

function below(paths: string[][], key: string): string[][] {
  return paths.filter((p) => p.length > 1 && (p[0] === key || p[0] === '*')).map((p) => p.slice(1))
}

/** The canonical text of a request (stable across key order and whitespace): what is hashed, and what a miss error compares. */
export function canonical(req: MatchInput, ignore: readonly string[] = []): string {
  return JSON.stringify({ path: req.path, body: normalize(req.body, ignore) })
}

/** The match key: a SHA-256 of the canonical text, hex. */
export function matchKey(req: MatchInput, ignore: readonly string[] = []): string {
  return new Bun.CryptoHasher('sha256').update(canonical(req, ignore)).digest('hex')
}

/**
 * The first place two normalized requests differ, as a dotted path (`body.messages.1.content`),
 * for a miss error that names the field; undefined when they are equal.
 */
export function firstDifference(a: unknown, b: unknown, at = ''): string | undefined {
  if (Object.is(a, b)) return undefined
  const here = at || '(root)'
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return here
  if (Array.isArray(a) !== Array.isArray(b)) return here
  const keys = new Set([...Object.keys(a), ...Object.keys(b as object)])
  for (const k of keys) {
    const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], at ? `${at}.${k}` : k)
    if (d) return d
  }
  return undefined
}
