// A latency probe in its own process: GET `url` every `everyMs` for `forMs`, then print the
// latencies as JSON. Measuring from the test process would count its own GC and work.
const [url, forMs = '2000', everyMs = '10'] = process.argv.slice(2)
const out: number[] = []
const end = performance.now() + Number(forMs)
while (performance.now() < end) {
  const t0 = performance.now()
  const res = await fetch(url!)
  await res.arrayBuffer()
  out.push(res.status === 200 ? performance.now() - t0 : Infinity)
  await Bun.sleep(Number(everyMs))
}
console.log(JSON.stringify(out))
export {}
