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

/**
 * One memory phase: the gateway's peak RSS (VmHWM) reset before it (`clear_refs`, or a fresh
 * gateway process when the kernel refused) and read after it.
 */
export interface MemoryPhase {
  /** `closed loop`: 64 connections on chat pass-through; `disconnects`: streams aborted after their first chunk. */
  kind: 'closed loop' | 'disconnects'
  label: string
  reset: 'clear_refs' | 'fresh process'
  seconds: number
  /** Requests answered (closed loop) or streams aborted after their first chunk, as intended. */
  done: number
  errors: number
  rps?: number
  rssBeforeMiB: number
  rssAfterMiB: number
  hwmMiB: number
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
  /** Which gateway routes the paths measured (the chat route may not be mounted yet); `reference`: the bare proxy's route for the same client surface. */
  paths: Record<string, { gateway: string; baseline: string; reference?: string }>
  /** `reference`: the same load through the bare Elysia proxy (bare-proxy.ts), on the same client surface, in the same run; `referenceCost`: the bare proxy's own CPU meanwhile. */
  openLoop: ({ path: string; rate: number; baseline: OpenLoopResult; gateway: OpenLoopResult; added: Added; reference?: OpenLoopResult; referenceAdded?: Added; cost: GatewayCost; referenceCost?: GatewayCost } & Noise)[]
  /** `rounds`: each round's req/s when gateway and bare proxy alternated (`gateway`, `reference` are the median rounds). */
  closedLoop: ({ path: string; baseline: ClosedLoopResult; gateway: ClosedLoopResult; reference?: ClosedLoopResult; cost: GatewayCost; referenceCost?: GatewayCost; rounds?: { gateway: number[]; reference: number[] } } & Noise)[]
  streams: ({ path: string; baseline: StreamResult; gateway: StreamResult; added: { ttfb: Added; chunkDelay: Added }; reference?: StreamResult; referenceAdded?: { ttfb: Added; chunkDelay: Added }; cost: GatewayCost; referenceCost?: GatewayCost } & Noise)[]
  /** `peakRssMiB`: the highest VmHWM read during the whole run (every reading before a reset counts). */
  memory: { idleRssMiB: number; finalRssMiB: number; peakRssMiB: number; phases?: MemoryPhase[] }
}
