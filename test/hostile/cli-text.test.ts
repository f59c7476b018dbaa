// What an operator types to the CLI and reads back from it:
//  - amounts in decimal only: `0x10` was 16 USD, `0b1` 1, ` 5` 5
//  - a C1 control is refused in a key's name, as on the admin API
//  - `keys list` shows a name or account that is not one plain word quoted and escaped, as the
//    text log does: a bidi control (allowed) reversed the rest of the line in the terminal, and
//    a C1 control a key got before C1 controls were refused drove it
import { afterAll, describe, expect, test } from 'bun:test'
import { runCli, startGateway, tempDir, cleanup } from '../helpers/server.ts'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) cleanup(d)
})

describe('the CLI', () => {
  test('amounts are decimal only: hex, binary, octal and padded numbers are refused, naming the flag', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const made = await runCli(['keys', 'create', '--name', 'cli', '--json', '--data-dir', dir])
    expect(made.code).toBe(0)
    const { id } = JSON.parse(made.stdout) as { id: string }
    for (const amount of ['0x10', '0b1', '0o7', ' 5', '5 ', '1_000']) {
      const r = await runCli(['keys', 'credit', id, amount, '--data-dir', dir])
      expect([amount, r.code, r.stderr.includes('--amount')]).toEqual([amount, 2, true])
    }
    const c = await runCli(['keys', 'create', '--name', 'x', '--credits', '0x10', '--data-dir', dir])
    expect([c.code, c.stderr.includes('--credits')]).toEqual([2, true])
    // decimal notation, an exponent included, is still an amount
    for (const amount of ['5', '0.25', '1e2', '.5']) {
      const r = await runCli(['keys', 'credit', id, amount, '--data-dir', dir])
      expect([amount, r.code]).toEqual([amount, 0])
    }
    const list = JSON.parse((await runCli(['keys', 'list', '--json', '--data-dir', dir])).stdout) as { credits: number }[]
    expect(list[0]!.credits).toBe(105.75)
  })

  test('grants add up to their decimal sum, shown so: 1.001 + 0.005 is 1.006', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const made = await runCli(['keys', 'create', '--name', 'sums', '--credits', '1.001', '--json', '--data-dir', dir])
    const { id } = JSON.parse(made.stdout) as { id: string }
    const shown = await runCli(['keys', 'credit', id, '0.005', '--data-dir', dir])
    expect(shown.stdout).toContain('credits=1.006  spent=0')
  })

  test('a name holding a C1 control is refused, naming --name', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const r = await runCli(['keys', 'create', '--name', 'a\u009b31m', '--data-dir', dir])
    expect([r.code, r.stderr.includes('--name')]).toEqual([2, true])
  })

  test('a name or account holding an invisible format character (zero-width space, bidi override) is refused, named', async () => {
    const dir = tempDir()
    dirs.push(dir)
    for (const [flag, text] of [['name', 'ad\u200bmin'], ['account', 'acme\u202e']]) {
      const r = await runCli(['keys', 'create', '--name', 'plain', `--${flag}`, text!, '--data-dir', dir])
      expect([flag, r.code, r.stderr.includes(`--${flag}: must not contain invisible`)]).toEqual([flag, 2, true])
    }
  })

  test('keys list quotes and escapes a name or account that is not one plain word', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const g = await startGateway({ dataDir: dir })
    // as a key made before C1 controls were refused holds it: the store takes what it is given
    await g.services.keys.create({ name: 'old\u009b31m', account: 'acct\u202eevil' })
    await g.services.keys.create({ name: 'two words', account: 'plain' })
    await g.stop()
    const r = await runCli(['keys', 'list', '--data-dir', dir])
    expect(r.code).toBe(0)
    // eslint-disable-next-line no-control-regex
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    expect(r.stdout).toContain('name="old\\u009b31m"')
    expect(r.stdout).toContain('account="acct\\u202eevil"')
    expect(r.stdout).toContain('account=plain  name="two words"')
  })
})
