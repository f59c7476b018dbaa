// Experiment (docs/bench.md, cluster mode): what a gateway spends idle, embedded and in cluster
// mode: its CPU over IDLE_S seconds with no request, after a warm-up of 500 chat requests. The
// gateway on core 1, the stores and the upstream on core 0, as in cluster.ts.
//   bun scripts/bench/experiments/idle.ts [rounds] [seconds]
import { chatCall, probe, send } from '../call.ts'
import { openStores } from '../cluster-stores.ts'
import { PASS_MODEL } from '../paths.ts'
import { cpuSeconds } from '../proc.ts'
import { pinSelf, spawnGateway, spawnUpstream } from '../processes.ts'

const [rounds = '3', seconds = '10'] = process.argv.slice(2)
const ADMIN = 'bench-admin-' + crypto.randomUUID()
const bootstrap = 'sk-sy-bench-' + crypto.randomUUID().replaceAll('-', '')

pinSelf(0)
const stores = await openStores(0)
const upstream = await spawnUpstream(0)
try {
  for (let round = 1; round <= Number(rounds); round++) {
    for (const setup of ['embedded', 'cluster']) {
      const env: Record<string, string> = { SWITCHYARD_ADMIN_TOKEN: ADMIN }
      if (setup === 'cluster') Object.assign(env, stores.env)
      const gw = await spawnGateway({ core: 1, upstream: upstream.url, key: bootstrap, env })
      try {
        const call = chatCall('chat', `${gw.url}/api/alpha/v1`, bootstrap, PASS_MODEL)
        await probe(call)
        for (let i = 0; i < 500; i++) await (await send(call)).text()
        await Bun.sleep(2_000)
        const cpu = cpuSeconds(gw.pid)
        await Bun.sleep(Number(seconds) * 1000)
        const ms = ((cpuSeconds(gw.pid) - cpu) * 1000) / Number(seconds)
        console.log(`round ${round} ${setup.padEnd(8)}: ${ms.toFixed(2)} ms of CPU a second idle`)
      } finally {
        await gw.stop()
      }
    }
  }
} finally {
  await upstream.stop()
  await stores.close()
}
