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
 * What looks like a provider's key (`sk-…`, `sk-proj-…`, `sk-ant-api03-…`), whole, cut short
 * or masked (`sk-proj-abc*****xyz1`): an upstream that quotes part of the key it was given tells
 * the client no less than part of the operator's key.
 */
const KEY_SHAPED = /\bsk-[A-Za-z0-9_-]{4,}[A-Za-z0-9_*-]*/g

/** `text` with every key this process holds, and whatever looks like one, replaced by `[redacted]`; the text itself when it holds none. */
export function withoutSecrets(text: string): string {
  for (const k of known) if (text.includes(k)) text = text.split(k).join('[redacted]')
  return text.includes('sk-') ? text.replace(KEY_SHAPED, '[redacted]') : text
}
