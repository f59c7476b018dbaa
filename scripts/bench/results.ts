// The shape of one bench run, as written to scripts/bench/results.json.
import type { ClosedLoopResult } from './closedloop.ts'
import type { OpenLoopResult } from './openloop.ts'
import type { machine } from './proc.ts'
import type { Summary } from './stats.ts'
import type { StreamResult } from './streams.ts'

type Added = Omit<Summary, 'n'>

/** What the gateway process spent during a phase. */
export interface GatewayCost {
  /** CPU (user + system) per successful request, ms. */
  cpuMsPerRequest: number
  /** CPU seconds ÷ wall seconds: near 1 means the gateway's core was the bottleneck. */
  coreBusy: number
  rssMiB: number
}

export interface Results {
  date: string
  machine: ReturnType<typeof machine>
  setup: {
    gatewayCore: number
    loadCore: number
    closedLoopTool: 'wrk' | 'bun'
    notes: string[]
  }
  /** Which gateway routes the paths measured (the chat route may not be mounted yet). */
  paths: Record<string, { gateway: string; baseline: string }>
  openLoop: { path: string; rate: number; baseline: OpenLoopResult; gateway: OpenLoopResult; added: Added; cost: GatewayCost }[]
  closedLoop: { path: string; baseline: ClosedLoopResult; gateway: ClosedLoopResult; cost: GatewayCost }[]
  streams: { path: string; baseline: StreamResult; gateway: StreamResult; added: { ttfb: Added; chunkDelay: Added }; cost: GatewayCost }[]
  memory: { idleRssMiB: number; finalRssMiB: number; peakRssMiB: number }
}
