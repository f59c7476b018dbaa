// A test-only hook: the answer to a write lost after the database committed it, as when the
// connection to PostgreSQL drops between the COMMIT taking effect and its answer arriving. Each
// place a write can lose it has a variable of its own; with it set to n, the first n writes there
// that commit fail after it as a database that is away (the tests set them; nothing a request
// sends reaches them). Counted per thread: a batch results writer counts its own.
const PLACES = {
  /** The recorder's one-statement write of records (PostgreSQL). */
  records: 'SWITCHYARD_TEST_LOSE_RECORDS_ANSWER',
  /** The recorder's transaction of records (over WHOLE_MAX of them, or one the statement could not take). */
  'records-tx': 'SWITCHYARD_TEST_LOSE_RECORDS_TX_ANSWER',
  /** A batch results writer's transaction of item results and their records. */
  results: 'SWITCHYARD_TEST_LOSE_RESULTS_ANSWER',
  /** The main thread's transaction of batch results that ran nowhere (batches/landing.ts). */
  landing: 'SWITCHYARD_TEST_LOSE_LANDING_ANSWER',
  /** A claim of batch items on PostgreSQL (batches/leases.ts). */
  claim: 'SWITCHYARD_TEST_LOSE_CLAIM_ANSWER',
} as const

type Place = keyof typeof PLACES

const left = new Map<Place, number>(Object.entries(PLACES).map(([place, name]) => [place as Place, Number(process.env[name] ?? 0) || 0]))

export function loseAnswerIfAsked(place: Place = 'records'): void {
  const n = left.get(place)!
  if (n <= 0) return
  left.set(place, n - 1)
  throw Object.assign(new Error(`connection closed after the commit (${PLACES[place]})`), { code: 'ERR_POSTGRES_CONNECTION_CLOSED' })
}
