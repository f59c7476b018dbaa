// The text a stream event carries that the model wrote: what a stream's output is counted from
// when the upstream's own count never came (a stream cut short, an upstream that says none).
import type { StreamEvent } from './types.ts'

export function eventText(ev: StreamEvent): string {
  switch (ev.type) {
    case 'text-delta':
    case 'reasoning-delta':
      return ev.text
    case 'tool-input-delta':
      return ev.delta
    case 'tool-input-start':
      return ev.name
    default:
      return ''
  }
}

/** Tells `to` the text of each event that carries some. */
export function tellText(events: readonly StreamEvent[], to: (text: string) => void): void {
  for (const ev of events) {
    const text = eventText(ev)
    if (text !== '') to(text)
  }
}
