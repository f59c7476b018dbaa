// The README's two commands need only Node and npm: Bun itself arrives as the `bun` package,
// whose install script puts the platform's binary in place. npm 12 skips a dependency's install
// script unless package.json's `allowScripts` names it, and leaves a stub that only prints an
// error, so `npm install && npm start` and `npm test` would fail on a machine with a current npm.
// Every dependency the lockfile marks as running an install script must therefore be allowed.
import { expect, test } from 'bun:test'
import lock from '../../package-lock.json'
import pkg from '../../package.json'

/** The package's name from its place in the lockfile (`node_modules/a/node_modules/@s/b` → `@s/b`). */
function nameAt(path: string): string {
  return path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)
}

/** Whether an allowScripts entry (`name` or `name@version`) lets this package's script run. */
function allowed(allow: Record<string, boolean>, name: string, version: string): boolean {
  return allow[`${name}@${version}`] ?? allow[name] ?? false
}

const packages = Object.entries((lock as { packages: Record<string, { version?: string; hasInstallScript?: boolean }> }).packages)
const withScripts = packages.filter(([path, p]) => path !== '' && p.hasInstallScript)

test('Bun reaches node_modules through an install script, so the lockfile must say so', () => {
  expect(withScripts.map(([path]) => nameAt(path))).toContain('bun')
})

test('every dependency that runs an install script is allowed to by package.json', () => {
  const allow = (pkg as { allowScripts?: Record<string, boolean> }).allowScripts ?? {}
  const blocked = withScripts.filter(([path, p]) => !allowed(allow, nameAt(path), p.version ?? '')).map(([path, p]) => `${nameAt(path)}@${p.version}`)
  expect(blocked).toEqual([])
})
