// The beta tokens a client asks for, which go upstream in Anthropic's `anthropic-beta` header:
// names such as `interleaved-thinking-2025-05-14`, comma-separated. Bounded, so that a client
// cannot have the gateway send an upstream a header of any length or any bytes.

/** One token: what every beta the SDK declares and Claude Code sends is made of. */
export const BETA_TOKEN = '^[A-Za-z0-9._-]{1,100}$'
const TOKEN = new RegExp(BETA_TOKEN)
/**
 * The most tokens, and the most characters of one header, a request may carry. The SDK alone
 * declares some 60 betas, and one request naming all of them and Claude Code's must pass.
 */
export const MAX_BETAS = 128
export const MAX_BETA_HEADER = 4096

/** What is wrong with a list of beta tokens, or undefined. */
export function betasFault(tokens: string[]): string | undefined {
  if (tokens.length > MAX_BETAS) return `${tokens.length} beta tokens, more than the ${MAX_BETAS} a request may name`
  const bad = tokens.find((t) => !TOKEN.test(t))
  if (bad === undefined) return undefined
  const shown = JSON.stringify(bad.slice(0, 40)) + (bad.length > 40 ? '…' : '')
  return bad.length > 100
    ? `a beta token of ${bad.length} characters (${shown}), longer than the 100 one may have`
    : `${shown} is not a beta token (letters, digits, "-", "_" and "." only)`
}

/** The tokens of one header's value (empty items between commas left out), or what is wrong with it. */
export function headerBetas(value: string): { tokens: string[] } | { fault: string } {
  if (value.length > MAX_BETA_HEADER) return { fault: `${value.length} characters, more than the ${MAX_BETA_HEADER} it may have` }
  const tokens = value.split(',').map((s) => s.trim()).filter(Boolean)
  const fault = betasFault(tokens)
  return fault ? { fault } : { tokens }
}
