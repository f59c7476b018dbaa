// Where a worker's entry point is. From source, it sits beside the module that starts it. In
// the compiled binary every bundled module has the executable's URL, and each worker entry
// point (scripts/build.ts lists them) is embedded at its path below the bundle root (src/).

/** `from` is the starting module's `import.meta.url`; `path` the entry's path below src/ (`tokens/worker.ts`). */
export function workerUrl(from: string, path: string): string {
  const file = path.slice(path.lastIndexOf('/') + 1)
  return from.includes('/$bunfs/') ? new URL(`./${path}`, from).href : new URL(`./${file}`, from).href
}
