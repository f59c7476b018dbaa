// Experiment (docs/bench.md, where a chunk's CPU goes): a CPU profile of one gateway tree while it
// holds N long streams of a path (`--cpu-prof`, summarised by profile-summary.ts).
//   bun scripts/bench/experiments/stream-prof.ts [path] [N] [tree]
import { mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { candidatePaths } from '../paths.ts'
import { ROOT, spawnGateway } from '../processes.ts'
import { heldStreams, longStreamRig } from './held-streams.ts'

const [path = 'pass-through', nArg = '1000', tree = '.'] = process.argv.slice(2)
const n = Number(nArg)
const { up, key, limit, client } = await longStreamRig(n)
const dir = mkdtempSync(join(tmpdir(), 'sy-stream-prof-'))
const gw = await spawnGateway({ core: 1, upstream: up.url, key, env: limit, profileDir: dir, root: tree === '.' ? ROOT : resolve(tree) })
const p = candidatePaths(gw.url, up.url, key, gw.url).find((x) => x.name === path)!
const h = await heldStreams(client, p.stream!.gateway, gw.pid, n)
console.log(`${path}: ${h.usPerChunk.toFixed(1)} µs/chunk, ${h.kibPerStream.toFixed(1)} KiB/stream`)
await gw.stop()
await up.stop()
for (let i = 0; i < 50 && !readdirSync(dir).some((f) => f.endsWith('.cpuprofile')); i++) await Bun.sleep(100)
const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
if (!file) throw new Error(`no profile in ${dir}`)
const summary = Bun.spawnSync([process.execPath, join(import.meta.dir, '../profile-summary.ts'), join(dir, file)])
console.log(summary.stdout.toString())
process.exit(0)
