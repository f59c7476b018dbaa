// A small seeded generator for tests that make their inputs at random: the same inputs every run.
export function seeded(seed: number) {
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648
  const pick = <T>(a: readonly T[]): T => a[Math.floor(next() * a.length)]!
  return { pick, chance: (p: number) => next() < p, count: (n: number) => Math.floor(next() * n) }
}
export type Seeded = ReturnType<typeof seeded>
