// The upstream keys this process holds, so that no text an upstream sends back carries one on
// to a client, a record or a log: an error that quotes the key it was given, whether it comes as
// an HTTP answer or inside a stream (an event the pass-through relays as it came is rewritten).
// The gateway's own error messages and every log line pass through here too: they quote what a
// client sent (a model, an id, a path), which may be its own key.
const known = new Set<string>()
/** The same keys in base64 (what of them stays the same however the encoding is aligned). */
const encoded = new Set<string>()

/** Keys shorter than this are not looked for: too likely to be ordinary text. */
const SHORTEST = 8

/** The keys of a provider's pool (called as each pool is made). */
export function rememberSecrets(keys: Iterable<string>): void {
  for (const k of keys) {
    if (typeof k !== 'string' || k.length < SHORTEST) continue
    known.add(k)
    // a proxy that quotes the Basic or Bearer credentials it was sent quotes them in base64
    for (const b of base64Forms(k)) encoded.add(b)
  }
}

/**
 * What of `key`'s base64 stays the same wherever it begins in the encoded text (the three
 * alignments of a byte in a group of three), in the standard and the URL alphabets: the
 * characters at either end that also encode what is around the key are left out.
 */
function base64Forms(key: string): string[] {
  const out = new Set<string>()
  for (const pad of ['', 'x', 'xx']) {
    const inner = Buffer.from(pad + key).toString('base64').slice(4, -4)
    if (inner.length < 16) continue
    out.add(inner)
    out.add(inner.replaceAll('+', '-').replaceAll('/', '_'))
  }
  return [...out]
}

/** Escapes whose last character is a letter or digit: `\nsk-…`, `\u0022sk-…` in a relayed event's JSON text, `%22sk-…` in a URL. */
const ESCAPE = String.raw`\\[bfnrt]|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}`

/**
 * A word that may be a provider's key (`sk-…`, `sk-proj-…`, `sk-ant-api03-…`, `sk_live_…`, in
 * either case) or the gateway's (`sk-sy-…`), whole, cut short or masked (`sk-proj-abc****xyz1`,
 * `sk-...wxyz`), at the start, after no letter or digit (`key-sk-…`) or after an escape; an `sk_`
 * not after an underscore either (an id's `cus_sk_…` is no key), an `sk-` after one still
 * (`OPENAI_API_KEY_sk-…`). Dots are taken in, for a key shown in part (`sk-abc...wxyz`), and those
 * that end it given back.
 */
const SK_WORD = new RegExp(`(?:(?<=^|[^A-Za-z0-9_]|${ESCAPE})(?:sk|SK)[-_]|(?<=_)(?:sk|SK)-)[A-Za-z0-9_*.…-]+`, 'g')

/** A gateway key (`sk-sy-` and its random base64url, which may hold no digit), glued to what comes before it or not. */
const GATEWAY_KEY = /sk-sy-[A-Za-z0-9_-]{4,}/g

/**
 * A word masked by a run of asterisks with no `sk` before them (`****wxyz`, `abc1****wxyz`). It
 * begins only where a word does: begun inside one, the scan of a long word would be repeated
 * from each of its characters.
 */
const STARRED_WORD = new RegExp(`(?<=^|[^A-Za-z0-9_*-]|${ESCAPE})[A-Za-z0-9_-]*\\*{4,}[A-Za-z0-9_*-]*`, 'g')

/** An ellipsis with more of a key after it: what is left out of a key shown in part. */
const ELLIPSIS_INSIDE = /(?:\.\.\.|…)[A-Za-z0-9*]/

/** Whether a `sk-` word is (part of) a key: masked, long with letters and digits as generated keys are, or the start of one this process holds; not a name such as `sk-learn` (the gateway's own, which may hold no digit, are GATEWAY_KEY's). */
function keyLike(word: string): boolean {
  const rest = word.slice(3)
  if (rest.length < 4) return false
  if (word.includes('*') || ELLIPSIS_INSIDE.test(rest)) return true
  if (rest.length >= 16 && /[0-9]/.test(rest) && /[A-Za-z]/.test(rest)) return true
  for (const k of known) if (k.startsWith(word)) return true
  return false
}

/** A `sk-` word redacted when it is a key; the dots that end a sentence after it are kept. */
function skWord(w: string): string {
  let end = w.length
  while (end > 3 && (w[end - 1] === '.' || w[end - 1] === '…')) end--
  return keyLike(w.slice(0, end)) ? '[redacted]' + w.slice(end) : w
}

/** Fewer characters shown around asterisks than this say too little to be a held key's. */
const SHOWN = 4

/**
 * Whether a word masked by asterisks shows the start or the end of a key this process holds
 * (`****wxyz`, `abc1****wxyz`): with no `sk` before it, nothing else tells a masked key from a
 * masked card number or a word with stars inside (`Hello****world`, `ending ****1234`), which
 * stay as written. A masked key the process does not hold is no secret of its own.
 */
function starredLike(word: string): boolean {
  const head = word.slice(0, word.indexOf('*'))
  const tail = word.slice(word.lastIndexOf('*') + 1)
  if (head.length < SHOWN && tail.length < SHOWN) return false
  for (const k of known) {
    if (head.length >= SHOWN && k.startsWith(head)) return true
    if (tail.length >= SHOWN && k.endsWith(tail)) return true
  }
  return false
}

/** `text` with every key this process holds, and whatever is part of one, replaced by `[redacted]`; the text itself when it holds none. */
export function withoutSecrets(text: string): string {
  for (const k of known) if (text.includes(k)) text = text.split(k).join('[redacted]')
  for (const k of encoded) if (text.includes(k)) text = text.split(k).join('[redacted]')
  // cheap checks first: nearly every text has neither, and its regexes are never run
  if (text.includes('sk-') || text.includes('sk_') || text.includes('SK-') || text.includes('SK_')) text = text.replace(SK_WORD, skWord)
  // the gateway's own keys, whose prefix says what they are wherever they begin (a path's `xsk-sy-…`)
  if (text.includes('sk-sy-')) text = text.replace(GATEWAY_KEY, '[redacted]')
  if (text.includes('****')) text = text.replace(STARRED_WORD, (w) => (starredLike(w) ? '[redacted]' : w))
  return text
}
