// A test-only hook: the answer to a write of records lost after the database committed it, as
// when the connection to PostgreSQL drops between the COMMIT taking effect and its answer
// arriving. With SWITCHYARD_TEST_LOSE_RECORDS_ANSWER=n set, the first n one-statement writes that
// commit fail after it as a database that is away (the tests set it; nothing a request sends
// reaches it).
let left = Number(process.env.SWITCHYARD_TEST_LOSE_RECORDS_ANSWER ?? 0) || 0

export function loseAnswerIfAsked(): void {
  if (left <= 0) return
  left--
  throw Object.assign(new Error('connection closed after the commit (SWITCHYARD_TEST_LOSE_RECORDS_ANSWER)'), { code: 'ERR_POSTGRES_CONNECTION_CLOSED' })
}
