// Builds GenerationInput values for tests: what a surface would hand the recorder.
import type { ApiKey } from '../../src/http/context.ts'
import type { Catalog } from '../../src/config/catalog.ts'
import type { Usage } from '../../src/ir/types.ts'
import type { GenerationInput } from '../../src/generations/types.ts'

let seq = 0

export function genInput(catalog: Catalog, apiKey: ApiKey, over: Partial<Omit<GenerationInput, 'model'>> & { model?: string } = {}): GenerationInput {
  const { model = 'gpt-4o', usage, ...rest } = over
  const m = catalog.resolve(model)
  if (!m) throw new Error(`test model ${model} is not in the catalog`)
  const u: Usage = usage ?? { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 }
  return {
    id: `chatcmpl-test-${++seq}-${crypto.randomUUID().slice(0, 8)}`,
    apiKey,
    endpoint: 'openai.chat.completions',
    stream: false,
    model: m,
    createdAt: Date.now(),
    usage: u,
    finishReason: 'stop',
    latencyMs: 120,
    ttftMs: 40,
    ...rest,
  }
}
