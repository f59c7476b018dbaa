// Experiment (docs/bench.md, long streams): a preload that sends a gateway's upstream calls over
// socket-fetch.ts instead of fetch, so another experiment can run the tree as it is with that
// transport: put `BUN_OPTIONS=--preload=<absolute path of this file>` in the gateway's environment
// (env-ab.ts takes it as a setting; the gateway's re-execution keeps it). stream-heap.ts, which runs
// the gateway in its own process, imports it.
import { socketTransport } from './socket-fetch.ts'

globalThis.fetch = Object.assign(socketTransport, { preconnect: fetch.preconnect }) as typeof fetch
