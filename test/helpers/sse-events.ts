// An SSE body's events: each one's name (when it has one) and its data lines joined.
export function sseEvents(sse: string): { event?: string; data: string }[] {
  const out: { event?: string; data: string }[] = []
  for (const block of sse.split(/\r?\n\r?\n/)) {
    let event: string | undefined
    const data: string[] = []
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart())
    }
    if (data.length > 0) out.push({ event, data: data.join('\n') })
  }
  return out
}
