// Bun imports text files as strings with `with { type: 'text' }`.
declare module '*.sql' {
  const text: string
  export default text
}
