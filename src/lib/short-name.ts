// A name held to a length limit (an upstream's tool names): as it is when it fits, else its first
// characters, `_` and 8 hex digits of a hash, so that two long names stay two.

/** `name` within `max` characters; past it, cut with the SHA-256 of `seed` (the name itself unless another is given). */
export function shortName(name: string, max: number, seed = name): string {
  if (name.length <= max) return name
  return `${name.slice(0, max - 9)}_${new Bun.CryptoHasher('sha256').update(seed).digest('hex').slice(0, 8)}`
}
