// Where a worker's entry point is, and which entry points have been heard from. From source, it
// sits beside the module that starts it. In the compiled binary every bundled module has the
// executable's URL, and each worker entry point (scripts/build.ts lists them) is embedded at its
// path below the bundle root, which the build pins to src/.

/** `from` is the starting module's `import.meta.url`; `path` the entry's path below src/ (`tokens/worker.ts`). */
export function workerUrl(from: string, path: string): string {
  const file = path.slice(path.lastIndexOf('/') + 1)
  return from.includes('/$bunfs/') ? new URL(`./${path}`, from).href : new URL(`./${file}`, from).href
}

/** Threads of each entry point that sent a first message, in this thread's life. */
const heard = new Map<string, number>()

/**
 * A worker of the entry at `path` (as workerUrl's). A thread whose entry cannot be loaded still
 * opens and then only errs, so an entry counts as loaded once one of its threads says anything.
 */
export function startWorker(from: string, path: string): Worker {
  const w = new Worker(workerUrl(from, path))
  w.addEventListener('message', () => heard.set(path, (heard.get(path) ?? 0) + 1), { once: true })
  return w
}

/** Entry path → threads of it heard from (the metrics' switchyard_worker_threads_loaded). */
export function workersHeard(): ReadonlyMap<string, number> {
  return heard
}
