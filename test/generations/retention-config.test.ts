// How long records are kept: `records.retention_days` (default 90), with the older names
// `generations.retention_days` and SWITCHYARD_RETENTION_DAYS still read; less than the 7 days
// records must be kept is refused at start, naming the setting.
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../../src/config/load.ts'
import { tempDir } from '../helpers/server.ts'

const dir = tempDir('switchyard-retention-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function load(env: Record<string, string> = {}, yaml?: string) {
  const flags: Record<string, string> = { 'data-dir': dir }
  if (yaml !== undefined) {
    flags.config = join(dir, 'c.yaml')
    writeFileSync(flags.config, yaml)
  }
  return loadConfig({ flags, env, cwd: dir }).generations
}

describe('records.retention_days', () => {
  test('90 days by default', () => {
    expect(load().retentionDays).toBe(90)
  })

  test('set in the config file, or by the environment, which wins', () => {
    expect(load({}, 'records:\n  retention_days: 14\n').retentionDays).toBe(14)
    expect(load({ SWITCHYARD_RECORDS_RETENTION_DAYS: '21' }, 'records:\n  retention_days: 14\n').retentionDays).toBe(21)
  })

  test('the older names still work; the new one wins over them', () => {
    expect(load({}, 'generations:\n  retention_days: 45\n').retentionDays).toBe(45)
    expect(load({ SWITCHYARD_RETENTION_DAYS: '60' }).retentionDays).toBe(60)
    expect(load({}, 'records:\n  retention_days: 10\ngenerations:\n  retention_days: 45\n').retentionDays).toBe(10)
    expect(load({ SWITCHYARD_RECORDS_RETENTION_DAYS: '8', SWITCHYARD_RETENTION_DAYS: '60' }).retentionDays).toBe(8)
    expect(load({}, 'generations:\n  max_backlog: 77\n').maxBacklog).toBe(77)
    expect(load({}, 'records:\n  max_backlog: 78\n').maxBacklog).toBe(78)
  })

  test('less than 7 days is refused, naming the setting', () => {
    expect(() => load({}, 'records:\n  retention_days: 6\n')).toThrow(/records\.retention_days: .*7/)
    expect(() => load({}, 'generations:\n  retention_days: 3\n')).toThrow(/generations\.retention_days: .*7/)
    expect(() => load({ SWITCHYARD_RECORDS_RETENTION_DAYS: '6.5' })).toThrow(/SWITCHYARD_RECORDS_RETENTION_DAYS: expected a plain decimal number ≥ 7, got "6.5"/)
    expect(() => load({ SWITCHYARD_RETENTION_DAYS: '1' })).toThrow(/SWITCHYARD_RETENTION_DAYS: expected a plain decimal number ≥ 7, got "1"/)
    // plain decimal only, as every number of the environment: a hex, binary or exponent form is no number of days
    for (const v of ['0x10', '0b111', '1e3', ' 8', '+8']) expect(() => load({ SWITCHYARD_RECORDS_RETENTION_DAYS: v })).toThrow(/SWITCHYARD_RECORDS_RETENTION_DAYS: expected a plain decimal number/)
    expect(() => load({ SWITCHYARD_RECORDS_MAX_BACKLOG: '0x10' })).toThrow(/SWITCHYARD_RECORDS_MAX_BACKLOG/)
    expect(() => load({ SWITCHYARD_RETENTION_DAYS: 'forever' })).toThrow(/SWITCHYARD_RETENTION_DAYS/)
    expect(load({ SWITCHYARD_RETENTION_DAYS: '7' }).retentionDays).toBe(7)
  })
})
