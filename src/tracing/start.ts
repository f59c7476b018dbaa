// Traces start only when a collector is configured. The OpenTelemetry packages load then, not
// in every gateway: they were about 130 ms of each start and 5 MiB of its memory.
import type { TracingSettings } from '../config/tracing.ts'
import type { Tracing, TracingDeps } from './tracing.ts'

export function startTracing(settings: TracingSettings, deps: TracingDeps): Tracing | undefined {
  if (!settings.url) return undefined
  const tracing = require('./tracing.ts') as typeof import('./tracing.ts')
  return tracing.startTracing(settings, deps)
}
