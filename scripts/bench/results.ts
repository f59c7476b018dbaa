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
  /** Cores' worth of CPU other processes on the machine used meanwhile (noise; ideally ~0). */
  otherCores: number
}

/** The most CPU other processes used during either half of a comparison, in cores. */
type Noise = { otherCores: number }

export interface Results {
  date: string
  machine: ReturnType<typeof machine>
  setup: {
    gatewayCore: number
    loadCore: number
    closedLoopTool: 'wrk' | 'bun'
    /** /proc/loadavg when the run began. */
    loadAvg: string
    notes: string[]
  }
  /** Which gateway routes the paths measured (the chat route may not be mounted yet). */
  paths: Record<string, { gateway: string; baseline: string }>
  /** `reference`: the same load through the bare Elysia proxy (bare-proxy.ts), for scale. */
  openLoop: ({ path: string; rate: number; baseline: OpenLoopResult; gateway: OpenLoopResult; added: Added; reference?: OpenLoopResult; referenceAdded?: Added; cost: GatewayCost } & Noise)[]
  closedLoop: ({ path: string; baseline: ClosedLoopResult; gateway: ClosedLoopResult; reference?: ClosedLoopResult; cost: GatewayCost } & Noise)[]
  streams: ({ path: string; baseline: StreamResult; gateway: StreamResult; added: { ttfb: Added; chunkDelay: Added }; reference?: StreamResult; referenceAdded?: { ttfb: Added; chunkDelay: Added }; cost: GatewayCost } & Noise)[]
  memory: { idleRssMiB: number; finalRssMiB: number; peakRssMiB: number }
}
