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

/** `text` with every key this process holds replaced by `[redacted]`; the text itself when it holds none. */
export function withoutSecrets(text: string): string {
  for (const k of known) if (text.includes(k)) text = text.split(k).join('[redacted]')
  return text
}
