// Cuts OpenAI's published OpenAPI description (openai/openai-openapi, `openapi.json`) down to the
// schemas of the objects this gateway answers on its OpenAI surfaces and every schema they
// reference, without prose: test/fixtures/openai/schema/openapi-subset.json, read by
// test/helpers/openai-schema.ts.
//   bun scripts/openapi-subset.ts path/to/openapi.json > test/fixtures/openai/schema/openapi-subset.json

/** The objects checked (test/pipeline/openai-schema.test.ts): replies, stream events, listings. */
export const ROOTS = [
  'CreateChatCompletionResponse', 'CreateChatCompletionStreamResponse', 'Response', 'ResponseStreamEvent',
  'ResponseItemList', 'ConversationResource', 'ConversationItemList', 'ConversationItem', 'DeletedConversationResource',
  'TokenCountsResource', 'OpenAIFile', 'ListFilesResponse', 'DeleteFileResponse', 'Batch', 'ListBatchesResponse',
  'ListModelsResponse', 'Model',
]

/** Keys that say nothing a check reads. */
const PROSE = new Set(['description', 'title', 'example', 'examples', 'x-oaiMeta', 'x-stainless-const', 'deprecated', 'x-oaiTypeLabel', 'format', 'default', 'x-oaiExpandable', 'x-stainless-naming', 'x-stainless-go-variant-constructor', 'discriminator'])

type Json = unknown

function subset(spec: { components: { schemas: Record<string, Json> } }): Record<string, Json> {
  const all = spec.components.schemas
  const kept = new Set<string>()
  const walk = (v: Json): void => {
    if (Array.isArray(v)) return v.forEach(walk)
    if (typeof v !== 'object' || v === null) return
    for (const [k, x] of Object.entries(v)) {
      if (k !== '$ref' || typeof x !== 'string') walk(x)
      else add(x.split('/').pop()!)
    }
  }
  const add = (name: string) => {
    if (kept.has(name)) return
    if (!(name in all)) throw new Error(`no schema ${name}`)
    kept.add(name)
    walk(all[name])
  }
  ROOTS.forEach(add)
  const strip = (v: Json): Json => {
    if (Array.isArray(v)) return v.map(strip)
    if (typeof v !== 'object' || v === null) return v
    return Object.fromEntries(Object.entries(v).filter(([k]) => !PROSE.has(k)).map(([k, x]) => [k, strip(x)]))
  }
  return Object.fromEntries([...kept].sort().map((n) => [n, strip(all[n])]))
}

if (import.meta.main) {
  const path = process.argv[2]
  if (!path) throw new Error('usage: bun scripts/openapi-subset.ts path/to/openapi.json')
  process.stdout.write(JSON.stringify(subset(await Bun.file(path).json())) + '\n')
}
