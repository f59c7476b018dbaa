// npm run build → dist/switchyard: one self-contained executable (Bun runtime, code,
// embedded migrations, the dashboard). Regenerates the migrations module and the dashboard's
// bundle first so the binary always carries every migration and the current page.
import { $ } from 'bun'
import { join } from 'node:path'

const root = join(import.meta.dir, '..')
await $`${process.execPath} ${join(root, 'scripts/gen-migrations.ts')}`.quiet()
// and the dashboard's bundle, so the binary serves the page built from the current sources
await $`${process.execPath} ${join(root, 'scripts/build-ui.ts')}`.quiet()
// workers are entry points of their own, so the binary carries them
const entrypoints = ['main.ts', 'db/checkpoint-worker.ts', 'db/json-rows-worker.ts', 'tokens/worker.ts', 'batches/worker.ts', 'batches/writer-worker.ts', 'batches/deflate-worker.ts', 'http/parts-worker.ts', 'http/inflate-worker.ts', 'tracing/export-worker.ts'].map((f) => join(root, 'src', f))
const result = await Bun.build({
  entrypoints,
  compile: { outfile: join(root, 'dist/switchyard') },
  minify: true,
  sourcemap: 'linked',
  target: 'bun',
  // the embedded entries' paths are taken below this root (lib/worker-url.ts counts on src/). Left
  // to Bun, it is the entries' common directory only up to eight entry points: from nine on, Bun
  // 1.4 takes the working directory, and every worker then sat at src/… where none was looked for.
  root: join(root, 'src'),
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
console.log(`built ${join(root, 'dist/switchyard')}`)
