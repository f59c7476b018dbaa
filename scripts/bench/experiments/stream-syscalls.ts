// Experiment (docs/bench.md, long streams): system calls a relayed chunk, the gateway against the
// bare proxy, N long pass-through streams held open (`strace -c -f` over 4 s of the plateau,
// divided by the chunks the clients read meanwhile).
//   bun scripts/bench/experiments/stream-syscalls.ts [N] [paths]
import { rawRequest } from '../lean-client.ts'
import { candidatePaths } from '../paths.ts'
import { spawnBareProxy, spawnGateway, type Child } from '../processes.ts'
import { longStreamRig } from './held-streams.ts'
import { perUnit, syscallsDuring } from './strace.ts'

const [nArg = '200', pathsArg = 'pass-through,messages pass-through,responses pass-through'] = process.argv.slice(2)
const n = Number(nArg)
const { up, key, limit, client } = await longStreamRig(n)
const targets: [string, () => Promise<Child>][] = [
  ['bare', () => spawnBareProxy(1, up.url, limit)],
  ['gateway', () => spawnGateway({ core: 1, upstream: up.url, key, env: limit })],
]
for (const path of pathsArg.split(','))
  for (const [name, start] of targets) {
    const t = await start()
    const p = candidatePaths(t.url, up.url, key, t.url).find((x) => x.name === path)!
    const call = name === 'bare' ? p.reference!.stream : p.stream!.gateway
    const req = rawRequest(call)
    await Promise.all(Array.from({ length: 20 }, () => client.stream(call, req, '', 1000)))
    const all = Array.from({ length: n }, () => client.stream(call, req, '', 60_000))
    await Bun.sleep(2000)
    const { result: chunks, calls } = await syscallsDuring(t.pid, async () => {
      const k0 = client.chunks
      await Bun.sleep(4000)
      return client.chunks - k0
    })
    console.log(`${path} ${name}: ${chunks} chunks, ${perUnit(calls, chunks, 'chunk', 0.02)}`)
    await Promise.all(all)
    await t.stop()
  }
await up.stop()
process.exit(0)
