// Bun imports text files as strings with `with { type: 'text' }`.
declare module '*.sql' {
  const text: string
  export default text
}

// The dashboard's stylesheet, imported by src/ui/app/main.ts for `bun build` to bundle.
declare module '*.css' {}
