// What a request asks of a model that not every model takes: images in its prompt, tools to
// call, a JSON schema its reply must follow. A fallback that lacks one is left out (pipeline/failover.ts): sent there, the request
// would only meet that model's 400 ("image_url is only supported by certain models"), and the
// client would get it in place of the failure that sent the request on, as OpenRouter leaves
// out the providers whose model lacks a modality or parameter the request uses (and GPT-5's own
// tools sent to an older GPT: Codex's apply_patch, a custom tool). Read from the
// surface's own body, not the IR: building that has effects on the plan (its compat names).
import type { Lack } from '../config/models.ts'
import { isObj } from '../lib/json.ts'

/** Each wire's part that is an image: chat's `image_url`, Responses' `input_image`, Claude's `image`. */
const IMAGE_PARTS: ReadonlySet<unknown> = new Set(['image_url', 'input_image', 'image'])

/** OpenAI's tool types not every model of the family takes (routing/openai-models.ts: lacksOfGeneration). */
const TOOL_NEEDS: Record<string, Lack> = { custom: 'custom-tools', apply_patch: 'patch-and-shell', shell: 'patch-and-shell' }

/** Parts looked at, at most: past it, no image is taken to be there (no fallback is left out for one). */
const MAX_PARTS = 100_000

/** Whether an image part sits anywhere in these messages or items (tool results' content too). */
function hasImage(roots: unknown[]): boolean {
  const stack: unknown[] = [...roots]
  let seen = 0
  while (stack.length > 0) {
    const v = stack.pop()
    if (Array.isArray(v)) {
      for (const x of v) {
        if (++seen > MAX_PARTS) return false
        if (typeof x === 'object' && x !== null) stack.push(x)
      }
      continue
    }
    if (!isObj(v)) continue
    if (IMAGE_PARTS.has(v.type)) return true
    // the places parts sit: a message's or an item's content, a tool result's output
    for (const k of ['content', 'output'] as const) if (typeof v[k] === 'object' && v[k] !== null) stack.push(v[k])
  }
  return false
}

/**
 * What of a model's `lacks` the request needs. `body`: the surface's checked body (chat's and
 * Claude's `messages`, Responses' `input`); `prompt`: a Responses thread's earlier items.
 */
export function needsOf(body: Record<string, unknown>, prompt: unknown[] = []): Set<Lack> {
  const needs = new Set<Lack>()
  const tools = body.tools ?? body.functions
  if (Array.isArray(tools) && tools.length > 0) {
    needs.add('tools')
    for (const t of tools) {
      const need = isObj(t) ? TOOL_NEEDS[t.type as string] : undefined
      if (need && Object.hasOwn(TOOL_NEEDS, t.type as string)) needs.add(need)
    }
  }
  // a JSON schema the reply must follow: chat's response_format, Responses' text.format
  const format = isObj(body.response_format) ? body.response_format : isObj(body.text) ? body.text.format : undefined
  if (isObj(format) && format.type === 'json_schema') needs.add('json-schema')
  const roots = [body.messages, body.input, ...prompt].filter((v) => typeof v === 'object' && v !== null)
  if (hasImage(roots)) needs.add('images')
  return needs
}

/** Whether a model that lacks these can take a request that needs those. */
export const canTake = (lacks: readonly Lack[] | undefined, needs: Set<Lack>): boolean => !lacks || !lacks.some((l) => needs.has(l))
