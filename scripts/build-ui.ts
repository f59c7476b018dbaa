// npm run build:ui → src/ui/assets.gen.ts: the dashboard page bundled (see ui-bundle.ts).
// Run it after changing anything in src/ui/app; `npm run build` runs it too.
import { writeFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { bundleUi, GENERATED, renderModule } from './ui-bundle.ts'

const b = await bundleUi()
writeFileSync(GENERATED, renderModule(b))
const files = [['index.html', b.index], ...Object.entries(b.assets).map(([p, a]) => [p, a.body])] as [string, string][]
const gz = files.reduce((n, [, body]) => n + gzipSync(body).length, 0)
console.log(`wrote ${GENERATED}: ${files.map(([p, body]) => `${p} ${body.length} B`).join(', ')}; ${gz} B gzipped in total`)
