// The upstream keys this process holds, so that no text an upstream sends back carries one on
// to a client, a record or a log: an error that quotes the key it was given, whether it comes as
// an HTTP answer or inside a stream (an event the pass-through relays as it came is rewritten).
const known = new Set<string>()

/** Keys shorter than this are not looked for: too likely to be ordinary text. */
const SHORTEST = 8

/** The keys of a provider's pool (called as each pool is made). */
export function rememberSecrets(keys: Iterable<string>): void {
  for (const k of keys) if (typeof k === 'string' && k.length >= SHORTEST) known.add(k)
}

/**
 * A word that may be a provider's key (`sk-…`, `sk-proj-…`, `sk-ant-api03-…`), whole, cut short
 * or masked (`sk-proj-abc*****xyz1`), after no letter or digit (`key-sk-…`) or a JSON escape (`\nsk-…`
 * inside a relayed event's text): an upstream that quotes part of the key it was given tells the
 * client no less than part of the operator's key.
 */
const KEY_WORD = /(?<=^|[^A-Za-z0-9]|\\[nrt])sk-[A-Za-z0-9_*-]{4,}/g

/** Whether a `sk-` word is (part of) a key: masked, long with letters and digits as generated keys are, or the start of one this process holds; not a name such as `sk-learn`. */
function keyLike(word: string): boolean {
  if (word.includes('*')) return true
  const rest = word.slice(3)
  if (rest.length >= 16 && /[0-9]/.test(rest) && /[A-Za-z]/.test(rest)) return true
  for (const k of known) if (k.startsWith(word)) return true
  return false
}

/** `text` with every key this process holds, and whatever is part of one, replaced by `[redacted]`; the text itself when it holds none. */
export function withoutSecrets(text: string): string {
  for (const k of known) if (text.includes(k)) text = text.split(k).join('[redacted]')
  return text.includes('sk-') ? text.replace(KEY_WORD, (w) => (keyLike(w) ? '[redacted]' : w)) : text
}
