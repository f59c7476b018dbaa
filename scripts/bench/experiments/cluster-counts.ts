// Experiment (docs/bench.md, cluster mode): what a chat pass-through request allocates on the
// gateway's request thread, by kind of object, embedded and in cluster mode (PostgreSQL + Redis),
// with the unlimited bootstrap key and with a funded key. As object-counts.ts: the collector off
// and two heap counts around a closed loop; what cluster mode and a funded key add a request
// shows without the machine's noise.
//   bun scripts/bench/experiments/cluster-counts.ts [seconds] [rounds]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chatCall, fundedKey, probe } from '../call.ts'
import { closedLoop } from '../closedloop.ts'
import { openStores } from '../cluster-stores.ts'
import { PASS_MODEL } from '../paths.ts'
import { pinSelf, spawnGateway, spawnUpstream } from '../processes.ts'
import { countingEnv, heapCounts, KindTable } from './heap-counts.ts'

const [secs = '5', rounds = '1'] = process.argv.slice(2)
const ADMIN = 'bench-admin-' + crypto.randomUUID()
const bootstrap = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const stores = await openStores(0)
const upstream = await spawnUpstream(0)

const table = new KindTable()
try {
  for (let round = 1; round <= Number(rounds); round++)
    for (const setup of ['embedded', 'cluster'] as const)
      for (const funded of [false, true]) {
        const dir = mkdtempSync(join(tmpdir(), 'switchyard-cluster-counts-'))
        const file = join(dir, 'counts.json')
        const gw = await spawnGateway({ core: 1, upstream: upstream.url, key: bootstrap, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, ...countingEnv(file), ...(setup === 'cluster' ? stores.env : {}) } })
        try {
          const call = chatCall('chat', `${gw.url}/api/alpha/v1`, funded ? await fundedKey(gw.url, ADMIN, 'funded') : bootstrap, PASS_MODEL)
          await probe(call)
          await closedLoop(call, { connections: 16, durationS: 2, core: 0 })
          const before = await heapCounts(gw.pid, file)
          const r = await closedLoop(call, { connections: 16, durationS: Number(secs), core: 0 })
          // what waits a few ms (settlements, the recorder's write) is counted with its requests
          await Bun.sleep(100)
          const after = await heapCounts(gw.pid, file)
          const label = `${setup}${funded ? ' funded' : ''}`
          table.add(label, before, after, r.requests)
          console.log(`round ${round} ${label}: ${r.requests} requests`)
        } finally {
          await gw.stop()
          rmSync(dir, { recursive: true, force: true })
        }
      }
} finally {
  await upstream.stop()
  await stores.close()
}
table.print()
