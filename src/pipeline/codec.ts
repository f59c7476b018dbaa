// What a surface gives the pipeline: how to write the IR's answer in its own wire. The
// pipeline owns every step around it (call, commit-late, pings, abort, record).
import type { Endpoint } from '../generations/types.ts'
import type { GenerationResponse, StreamEvent, Usage } from '../ir/types.ts'

export interface StreamEncoderState {
  id: string
  usage: Usage
  /** The finish reason in the surface's own words (`stop`, `end_turn`, …), for the record. */
  finishReason: string | null
  /** A content-bearing frame went out. */
  produced: boolean
  /** The surface's terminator went out. */
  done: boolean
  /** Responses-style status, for the record. */
  status?: string | null
}

export interface StreamEncoder {
  readonly state: StreamEncoderState
  /** The wire text for one IR event ('' when it has no wire form). */
  push(ev: StreamEvent): string
}

export interface EncodedReply {
  body: Record<string, unknown>
  /** The id the client sees, which the record keeps. */
  id: string
  finishReason: string | null
  /** Responses-style status, for the record. */
  status?: string | null
}

export interface SurfaceCodec {
  endpoint: Endpoint
  /** A stand-in id until the upstream names the generation. */
  fallbackId: () => string
  encodeJson(r: GenerationResponse, model: string): EncodedReply
  /** `promptTokens`: the gateway's count of the prompt, where the codec asks for one (promptAtStart). */
  streamEncoder(o: { id: string; model: string; created: number; includeUsage: boolean; promptTokens?: number }): StreamEncoder
  /**
   * The wire says the prompt's size as the reply begins (messages' `message_start`): where the
   * upstream says it only at its end (another family's), the gateway's count stands in there.
   */
  promptAtStart?: boolean
  /** The surface's in-band frame for a failure after the first byte. */
  errorFrame(e: unknown): string
  /**
   * Resolves once what the reply stored is durable (responses: the thread row committed). The
   * pipeline holds the reply's last bytes until then, so a client never has what a crash loses.
   */
  durable?(): Promise<void>
}
