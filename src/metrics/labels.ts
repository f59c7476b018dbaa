// Label values are bounded: a model or a provider is its own label only when the config or the
// built-in table names it; anything else (a model known only to the price library, a client's
// random `mock-…` id) counts as `other`. Each value has a small index, so a series is found by
// arithmetic on indexes and one map lookup of a number, never by a string built per request.
import type { Catalog } from '../config/catalog.ts'
import { MOCK_ID } from '../config/providers.ts'
import type { Family } from '../ir/types.ts'
import type { Surface } from '../config/models.ts'

export const OTHER = 'other'

/** Values fixed at start, each with its index; index 0 is `other`. */
export class LabelSet {
  private readonly index = new Map<string, number>()
  readonly values: string[] = [OTHER]

  constructor(values: Iterable<string>) {
    for (const v of values) {
      if (this.index.has(v) || v === OTHER) continue
      this.index.set(v, this.values.length)
      this.values.push(v)
    }
  }

  indexOf(v: string | undefined): number {
    return v === undefined ? 0 : (this.index.get(v) ?? 0)
  }

  get size(): number {
    return this.values.length
  }
}

export const SURFACES: readonly Surface[] = ['chat', 'responses', 'messages']
export const FAMILIES: readonly Family[] = ['openai', 'anthropic']

/** Which surface a record's endpoint is (a batch item's record names only its endpoint). */
export function surfaceOfEndpoint(endpoint: string): number {
  return endpoint === 'openai.responses' ? 1 : endpoint === 'anthropic.messages' ? 2 : 0
}

/** The bounded sets of a gateway: its catalog's models (as configured and built in) and its providers. */
export interface Labels {
  models: LabelSet
  providers: LabelSet
}

export function gatewayLabels(catalog: Pick<Catalog, 'list'>, providerIds: Iterable<string>): Labels {
  const models = catalog.list()
  const deployed = models.flatMap((m) => m.deployments.map((d) => d.provider))
  return {
    models: new LabelSet(models.map((m) => m.id)),
    providers: new LabelSet([...providerIds, ...deployed, MOCK_ID]),
  }
}

/** An HTTP status as a series keeps it: its code, or 0 (`other`) for anything that is not one. */
export function statusCode(status: number): number {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? status : 0
}

export const statusLabel = (code: number): string => (code === 0 ? OTHER : String(code))
