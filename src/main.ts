#!/usr/bin/env bun
// Entry. `serve` needs Bun's fetch client to run with the gateway's limit on upstream calls (and
// the runtime with a few settings of its own), which only the environment the process starts with
// can set: when they are not there, the process re-executes itself with them
// (runtime/start-env.ts) here, before the CLI's modules load, so that costs a fresh start and
// nothing more. A config file that asks for another limit is read later, by `serve`, which
// re-executes once more for it.
import { earlyStartEnv } from './runtime/start-env.ts'

await earlyStartEnv(process.argv.slice(2))
const { main } = await import('./cli.ts')
await main(process.argv.slice(2))
