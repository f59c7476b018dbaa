// Experiment (docs/bench.md, long streams): system calls a relayed chunk, the gateway against the
// bare proxy, N long pass-through streams held open (`strace -c -f` over 4 s of the plateau,
// divided by the chunks the clients read meanwhile).
//   bun scripts/bench/experiments/stream-syscalls.ts [N] [paths]
import { LeanClient, rawRequest } from '../lean-client.ts'
import { candidatePaths } from '../paths.ts'
import { pinSelf, spawnBareProxy, spawnGateway, spawnUpstream, type Child } from '../processes.ts'

const [nArg = '200', pathsArg = 'pass-through,messages pass-through,responses pass-through'] = process.argv.slice(2)
const n = Number(nArg)
pinSelf(0)
const up = await spawnUpstream(0, { UPSTREAM_STREAM_CHUNKS: '200', UPSTREAM_STREAM_GAP_MS: '50' })
const key = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
const limit = { BUN_CONFIG_MAX_HTTP_REQUESTS: String(n + 1024) }
const client = new LeanClient()
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
    const out = `/tmp/stream-syscalls-${process.pid}.txt`
    const st = Bun.spawn(['strace', '-c', '-f', '-o', out, '-p', String(t.pid)], { stderr: 'ignore', stdout: 'ignore' })
    await Bun.sleep(300)
    const k0 = client.chunks
    await Bun.sleep(4000)
    const chunks = client.chunks - k0
    st.kill('SIGINT')
    await st.exited
    const rows = (await Bun.file(out).text()).split('\n').filter((l) => /^\s*[\d.]+\s+[\d.]+\s+\d+\s+\d+/.test(l) && !/total$/.test(l.trim()))
    const calls = rows.map((l) => {
      const f = l.trim().split(/\s+/)
      return { name: f[f.length - 1]!, calls: Number(f[3]) }
    })
    const total = calls.reduce((a, c) => a + c.calls, 0)
    console.log(`${path} ${name}: ${chunks} chunks, ${(total / chunks).toFixed(2)} system calls a chunk: ${calls.filter((c) => c.calls / chunks >= 0.02).sort((a, b) => b.calls - a.calls).map((c) => `${c.name} ${(c.calls / chunks).toFixed(2)}`).join(', ')}`)
    await Promise.all(all)
    await t.stop()
  }
await up.stop()
process.exit(0)
