// The `media` config section: defaults (private addresses refused, 20 MiB, 10 s), the file's
// values, and the environment over the file; unknown keys in the section are refused.
import { afterAll, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config/load.ts'
import { fetchPolicy } from '../../src/media/fetch.ts'
import { tempDir } from '../helpers/server.ts'

const dir = tempDir()
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function load(yaml: string | null, env: Record<string, string> = {}) {
  const flags: Record<string, string> = { 'data-dir': dir }
  if (yaml !== null) {
    flags.config = join(dir, 'c.yaml')
    writeFileSync(flags.config, yaml)
  }
  return loadConfig({ flags, env, cwd: dir })
}

test('defaults: private addresses refused, 20 MiB, 10 s', () => {
  expect(fetchPolicy(load(null))).toEqual({ allowPrivate: false, maxBytes: 20 * 1024 * 1024, maxRequestBytes: 32 * 1024 * 1024, timeoutMs: 10_000 })
})

test('the file sets them; the environment wins over the file', () => {
  const yaml = 'media:\n  allow_private_urls: true\n  max_bytes: 1000\n  max_request_bytes: 3000\n  timeout_ms: 500\n'
  expect(fetchPolicy(load(yaml))).toEqual({ allowPrivate: true, maxBytes: 1000, maxRequestBytes: 3000, timeoutMs: 500 })
  const env = { SWITCHYARD_MEDIA_ALLOW_PRIVATE_URLS: 'false', SWITCHYARD_MEDIA_MAX_BYTES: '2000', SWITCHYARD_MEDIA_MAX_REQUEST_BYTES: '4000', SWITCHYARD_MEDIA_TIMEOUT_MS: '700' }
  expect(fetchPolicy(load(yaml, env))).toEqual({ allowPrivate: false, maxBytes: 2000, maxRequestBytes: 4000, timeoutMs: 700 })
})

test('an unknown key or a wrong type in the section is refused at start', () => {
  expect(() => load('media:\n  allow_private: true\n')).toThrow()
  expect(() => load('media:\n  max_bytes: -1\n')).toThrow()
})
