// What a surface hands the recorder when a request ends (streamed or not, ok or failed).
import type { ApiKey } from '../http/context.ts'
import type { CatalogModel } from '../config/catalog.ts'
import type { Usage } from '../ir/types.ts'

export type Endpoint = 'openai.chat.completions' | 'openai.responses' | 'anthropic.messages'

export interface GenerationInput {
  /** The id the client saw (chat id, response id, message id). */
  id: string
  apiKey: ApiKey
  endpoint: Endpoint
  stream: boolean
  model: CatalogModel
  /** Epoch ms when the request arrived. */
  createdAt: number
  /** What was produced, also when the client disconnected (billed). */
  usage: Usage
  /** The surface's own finish reason string (`stop`, `length`, `tool_calls`, `end_turn`…). */
  finishReason: string | null
  /** Responses-style status, when there is one. */
  status?: string | null
  latencyMs: number
  ttftMs: number | null
  error?: string | null
  httpStatus?: number
  batchId?: string | null
  /** The credit reservation taken at admission, settled when this record is taken. */
  reservationId?: string
  /** The provider (its configured id) that served, or last failed; the model's first one when none was tried. */
  provider?: string
  /** The model id that provider was sent (the deployment's upstream id). */
  deployment?: string | null
  /** The upstream calls made for it, in order: those that failed before the first byte, then the one that served (or failed last). */
  attempts?: UpstreamAttempt[]
  /** The gateway's id for the record (`gen-…`), made when the generation ends so its trace can name it; the recorder stores it under this id. */
  recordId?: string
  /** Answered from the response cache: recorded at no cost. */
  cached?: boolean
  /** Answered from a cassette (src/replay): recorded at no cost unless `billed`. */
  replayed?: { billed: boolean }
}

/** A record that costs nothing: answered from the response cache, or replayed unbilled. */
export function costsNothing(g: Pick<GenerationInput, 'cached' | 'replayed'>): boolean {
  return g.cached === true || (g.replayed !== undefined && !g.replayed.billed)
}

/** Whose a record is: what a lookup waits for when it waits for records of one key or account only. */
export interface Whose {
  keyId: string
  account: string
}

/** One upstream call of a request: which provider, what it answered (an HTTP status; 200 when it served), how long it took. */
export interface UpstreamAttempt {
  provider: string
  status: number
  ms: number
}

export interface GenerationSink {
  /** Records are waiting for a database that cannot take them, past the bound: serve nothing more unrecorded. */
  readonly backlogged?: boolean
  /** Why, when it is not the bound: the local disk cannot keep the records waiting (full). */
  readonly backlogNote?: string
  /** Never throws and never delays a response: call it after the last byte is sent. */
  record(input: GenerationInput): void
  /**
   * A record whose usage is still being counted (a dropped stream billed in the token
   * worker). Lookups and shutdown wait for it, so it is found like any other.
   */
  recordLater(input: Promise<GenerationInput>, rough?: () => GenerationInput, whose?: Whose): void
  /**
   * Like record(), on the next turn of the event loop: a request's reply is written before
   * its record is priced and queued. Its credit reservation holds until then, so the next
   * admission still sees the request's cost (as the estimate, then as the real one).
   */
  recordSoon?(input: GenerationInput): void
  /** Run `fn` (it ends in a record) on the next turn, or before any flush or lookup that comes first. */
  later?(fn: () => void): void
}
