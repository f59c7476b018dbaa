/**
 * `i`, moved past the second half of a surrogate pair it would split: text cut there is whole
 * characters (a piece encoded or decoded on its own gets no halves of an emoji).
 */
export function charBoundary(s: string, i: number): number {
  const c = s.charCodeAt(i - 1)
  return i < s.length && c >= 0xd800 && c <= 0xdbff ? i + 1 : i
}
