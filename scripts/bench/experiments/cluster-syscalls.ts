// Experiment (docs/bench.md, cluster mode): system calls a chat pass-through request makes on
// the gateway in cluster mode (PostgreSQL + Redis) with a funded key, in an open loop (1,000
// req/s by default: requests one by one, so nothing is batched across them), counted by
// `strace -c -f`. A count does not move with the machine's speed, so trees compare on a noisy
// VM; trees in alternating rounds.
//   bun scripts/bench/experiments/cluster-syscalls.ts <tree>[,<tree>...] [req/s] [seconds] [rounds]
// (EMBEDDED=1: the same on the embedded setup, for the difference)
import { resolve } from 'node:path'
import { chatCall, fundedKey, probe } from '../call.ts'
import { openStores } from '../cluster-stores.ts'
import { openLoop } from '../openloop.ts'
import { PASS_MODEL } from '../paths.ts'
import { pinSelf, ROOT, spawnGateway, spawnUpstream } from '../processes.ts'
import { perUnit, syscallsDuring } from './strace.ts'

const [treesArg = '.', rate = '1000', secs = '5', rounds = '1'] = process.argv.slice(2)
const trees = treesArg.split(',').map((t) => (t === '.' ? ROOT : resolve(t)))
const ADMIN = 'bench-admin-' + crypto.randomUUID()
const bootstrap = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')
pinSelf(0)
const stores = await openStores(0)
const upstream = await spawnUpstream(0)
try {
  for (let round = 1; round <= Number(rounds); round++)
    for (const root of trees) {
      const gw = await spawnGateway({ core: 1, upstream: upstream.url, key: bootstrap, root, env: { SWITCHYARD_ADMIN_TOKEN: ADMIN, ...(process.env.EMBEDDED ? {} : stores.env) } })
      try {
        const call = chatCall('chat', `${gw.url}/api/alpha/v1`, await fundedKey(gw.url, ADMIN, 'funded'), PASS_MODEL)
        await probe(call)
        await openLoop(call, Number(rate), 2_000)
        const { result: r, calls } = await syscallsDuring(gw.pid, () => openLoop(call, Number(rate), Number(secs) * 1000))
        console.log(`round ${round} ${root === ROOT ? 'this tree' : root}: ${r.ok} requests, ${perUnit(calls, r.ok, 'request')}`)
      } finally {
        await gw.stop()
      }
    }
} finally {
  await upstream.stop()
  await stores.close()
}
process.exit(0)
