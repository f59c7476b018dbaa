// The count of spans this thread never exported, kept apart from the processor so that /metrics
// can read it without loading the OpenTelemetry packages a gateway without traces never needs.
let dropped = 0

/** Spans of this thread that were never exported: the queue was full, or their export failed. */
export function droppedSpans(): number {
  return dropped
}

export function countDropped(n: number): void {
  dropped += n
}
