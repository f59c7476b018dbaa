// What a request asks of a model that not every model takes: images or files (PDFs) in its
// prompt, tools to call, a JSON schema its reply must follow. A fallback that lacks one is left
// out (pipeline/failover.ts): sent there, the request would only meet that model's 400
// ("image_url is only supported by certain models"), and the client would get it in place of
// the failure that sent the request on, as OpenRouter leaves out the providers whose model lacks
// a modality or parameter the request uses (and GPT-5's own tools sent to an older GPT: Codex's
// apply_patch, a custom tool). Read from the surface's own body, not the IR: building that has
// effects on the plan (its compat names).
import type { Lack } from '../config/models.ts'
import { isObj } from '../lib/json.ts'

/**
 * Each wire's parts a model may not take: chat's `image_url` and `file`, Responses'
 * `input_image` and `input_file`, Claude's `image` and `document` (but a document of plain text
 * or of content blocks, which any model reads as text).
 */
const PART_NEEDS: Record<string, Lack> = { image_url: 'images', input_image: 'images', image: 'images', file: 'files', input_file: 'files', document: 'files' }
const TEXT_DOCUMENT: ReadonlySet<unknown> = new Set(['text', 'content'])

/** OpenAI's tool types not every model of the family takes (routing/openai-models.ts: lacksOfGeneration). */
const TOOL_NEEDS: Record<string, Lack> = { custom: 'custom-tools', apply_patch: 'patch-and-shell', shell: 'patch-and-shell' }

/** Parts looked at, at most: past it, none is taken to be there (no fallback is left out for one). */
const MAX_PARTS = 100_000

/** What the parts anywhere in these messages or items need (tool results' content too), into `needs`. */
function partNeeds(roots: unknown[], needs: Set<Lack>): void {
  const stack: unknown[] = [...roots]
  let seen = 0
  while (stack.length > 0) {
    const v = stack.pop()
    if (++seen > MAX_PARTS) return
    if (Array.isArray(v)) {
      for (const x of v) {
        if (++seen > MAX_PARTS) return
        if (typeof x === 'object' && x !== null) stack.push(x)
      }
      continue
    }
    if (!isObj(v)) continue
    const type = typeof v.type === 'string' && Object.hasOwn(PART_NEEDS, v.type) ? v.type : undefined
    if (type !== undefined && !(type === 'document' && isObj(v.source) && TEXT_DOCUMENT.has(v.source.type))) {
      needs.add(PART_NEEDS[type]!)
      if (needs.has('images') && needs.has('files')) return
    }
    // the places parts sit: a message's or an item's content, a tool result's output
    for (const k of ['content', 'output'] as const) if (typeof v[k] === 'object' && v[k] !== null) stack.push(v[k])
  }
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
      if (isObj(t) && typeof t.type === 'string' && Object.hasOwn(TOOL_NEEDS, t.type)) needs.add(TOOL_NEEDS[t.type]!)
    }
  }
  // a JSON schema the reply must follow: chat's response_format, Responses' text.format
  const format = isObj(body.response_format) ? body.response_format : isObj(body.text) ? body.text.format : undefined
  if (isObj(format) && format.type === 'json_schema') needs.add('json-schema')
  const roots = [body.messages, body.input, ...prompt].filter((v) => typeof v === 'object' && v !== null)
  partNeeds(roots, needs)
  return needs
}

/** Whether a model that lacks these can take a request that needs those. */
export const canTake = (lacks: readonly Lack[] | undefined, needs: Set<Lack>): boolean => !lacks || !lacks.some((l) => needs.has(l))
