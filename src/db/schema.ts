// The metadata schema. drizzle-kit generates db/migrations from this file.
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    account: text('account').notNull().default('default'),
    name: text('name').notNull(),
    /** SHA-256 of the key, hex. The key itself is never stored. */
    keyHash: text('key_hash').notNull(),
    /** First characters of the key, for people to tell keys apart in lists. */
    keyPrefix: text('key_prefix').notNull(),
    status: text('status', { enum: ['active', 'inactive'] }).notNull().default('active'),
    /** USD granted; null = unlimited. */
    credits: real('credits'),
    spent: real('spent').notNull().default(0),
    /** Per-key requests-per-minute override; null = the configured default. */
    rpm: integer('rpm'),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    /** Epoch ms of the last change by a person (CLI/admin), watched by running servers. */
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [uniqueIndex('api_keys_hash').on(t.keyHash), index('api_keys_updated').on(t.updatedAt)],
)

export const files = sqliteTable(
  'files',
  {
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    filename: text('filename').notNull(),
    purpose: text('purpose').notNull(),
    bytes: integer('bytes').notNull(),
    mimeType: text('mime_type').notNull(),
    /** Epoch ms. */
    createdAt: integer('created_at').notNull(),
    /** Epoch ms; null = never. */
    expiresAt: integer('expires_at'),
    /** Where the blob store keeps the bytes (never derived from the filename). */
    blobKey: text('blob_key').notNull(),
    sha256: text('sha256'),
  },
  (t) => [index('files_key_created').on(t.apiKeyId, t.createdAt)],
)

export const generations = sqliteTable(
  'generations',
  {
    /**
     * The gateway's own id (`gen-…`), unique per record. Records made before it existed keep
     * the reply id they were stored under.
     */
    id: text('id').primaryKey(),
    /**
     * The id the client saw (chat/response/message id, usually the upstream's). Not unique:
     * an upstream may reuse one, and every record is kept.
     */
    replyId: text('reply_id').notNull().default(''),
    apiKeyId: text('api_key_id').notNull(),
    account: text('account').notNull(),
    endpoint: text('endpoint').notNull(),
    stream: integer('stream', { mode: 'boolean' }).notNull(),
    /** Canonical catalog id. */
    model: text('model').notNull(),
    provider: text('provider').notNull(),
    /** Epoch ms. */
    createdAt: integer('created_at').notNull(),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    totalTokens: integer('total_tokens').notNull().default(0),
    cacheCreationInputTokens: integer('cache_creation_input_tokens').notNull().default(0),
    cacheReadInputTokens: integer('cache_read_input_tokens').notNull().default(0),
    reasoningTokens: integer('reasoning_tokens'),
    finishReason: text('finish_reason'),
    /** Responses-style status (completed, requires_action, incomplete, failed). */
    status: text('status'),
    /** USD after discount; null when unpriced. */
    cost: real('cost'),
    unpriced: integer('unpriced', { mode: 'boolean' }).notNull().default(false),
    latencyMs: integer('latency_ms'),
    ttftMs: integer('ttft_ms'),
    /** Error message when the request failed. */
    error: text('error'),
    httpStatus: integer('http_status'),
    batchId: text('batch_id'),
  },
  (t) => [
    index('generations_key').on(t.apiKeyId, t.createdAt),
    index('generations_account_created').on(t.account, t.createdAt),
    index('generations_created').on(t.createdAt),
    index('generations_reply').on(t.replyId, t.apiKeyId, t.createdAt),
  ],
)

/**
 * Hourly rollup of generations per account and model, maintained on write so that the
 * usage report reads hundreds of rows, not millions.
 */
export const usageHourly = sqliteTable(
  'usage_hourly',
  {
    account: text('account').notNull(),
    model: text('model').notNull(),
    /** Epoch ms of the UTC hour start. */
    hour: integer('hour').notNull(),
    requests: integer('requests').notNull().default(0),
    inputTokens: integer('input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    totalTokens: integer('total_tokens').notNull().default(0),
    cost: real('cost').notNull().default(0),
    unpricedRequests: integer('unpriced_requests').notNull().default(0),
  },
  (t) => [uniqueIndex('usage_hourly_pk').on(t.account, t.hour, t.model)],
)


/**
 * Stored responses of responses-style threads, keyed by the gateway's own row id: the response
 * id a client saw (an upstream's, on the pass-through path) may repeat across keys or within
 * one (upstreams and proxies reuse ids), so it is a field a key's lookup reads, latest first,
 * never a key one client's save could overwrite another's with. `previous_row_id` chains rows.
 */
export const storedResponses = sqliteTable(
  'stored_responses',
  {
    rowId: text('row_id').primaryKey(),
    /** The response id the client saw (`resp_…`). */
    id: text('id').notNull(),
    apiKeyId: text('api_key_id').notNull(),
    model: text('model').notNull(),
    /** Epoch ms. */
    createdAt: integer('created_at').notNull(),
    status: text('status').notNull(),
    previousRowId: text('previous_row_id'),
    /** The response id this one continued, as the client gave it. */
    previousResponseId: text('previous_response_id'),
    conversation: text('conversation'),
    /** JSON: the input items this request added (system instructions excluded). */
    inputItems: text('input_items').notNull(),
    /** JSON: the reply's output items. */
    outputItems: text('output_items').notNull(),
    /** JSON: the response object as the client got it, without its output (retrieve). */
    response: text('response'),
    /** Stored bytes of the thread ending here (this row and every earlier one): its size bound. */
    threadBytes: integer('thread_bytes').notNull().default(0),
  },
  (t) => [index('stored_responses_key_id').on(t.apiKeyId, t.id, t.createdAt), index('stored_responses_conversation').on(t.apiKeyId, t.conversation, t.createdAt)],
)

/**
 * Batches (§2, §3): one row per batch, with its counters kept on write so that a
 * poll reads one row. Times are epoch ms; null until the event happened.
 */
export const batches = sqliteTable(
  'batches',
  {
    /** `batch_…` (OpenAI-shaped routes) or `msgbatch_…` (Anthropic Message Batches). */
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    /** The API that created it, whose shapes it is shown in. */
    family: text('family', { enum: ['openai', 'anthropic'] }).notNull(),
    /** `/v1/chat/completions`, `/v1/responses` or `/v1/messages`. */
    endpoint: text('endpoint').notNull(),
    inputFileId: text('input_file_id'),
    completionWindow: text('completion_window').notNull(),
    status: text('status', { enum: ['queued', 'processing', 'completed', 'cancelled', 'expired', 'failed'] }).notNull(),
    /** JSON object, as given. */
    metadata: text('metadata'),
    /** `settings.concurrency` as given (null: the configured maximum). */
    concurrency: integer('concurrency'),
    /** Seconds the output files live (OpenAI `output_expires_after`); null: until deleted. */
    outputExpiresAfter: integer('output_expires_after'),
    total: integer('total').notNull(),
    succeeded: integer('succeeded').notNull().default(0),
    /** Every failed item, those failed by a cancel or an expiry included. */
    failed: integer('failed').notNull().default(0),
    cancelledItems: integer('cancelled_items').notNull().default(0),
    expiredItems: integer('expired_items').notNull().default(0),
    /** JSON array of `{ code, message }`: why the batch failed. */
    errors: text('errors'),
    outputFileId: text('output_file_id'),
    errorFileId: text('error_file_id'),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    inProgressAt: integer('in_progress_at'),
    completedAt: integer('completed_at'),
    cancelledAt: integer('cancelled_at'),
    failedAt: integer('failed_at'),
    expiredAt: integer('expired_at'),
    /** Every item has its result and the output files are written: nothing more will change. */
    endedAt: integer('ended_at'),
    /** Instances sharing a database: the one writing the output files, until when (epoch ms). */
    finalizer: text('finalizer'),
    finalizerUntil: integer('finalizer_until'),
  },
  (t) => [index('batches_key_created').on(t.apiKeyId, t.createdAt), index('batches_open').on(t.endedAt), index('batches_input_file').on(t.inputFileId)],
)

/**
 * The items of a batch, in input order, with their result once they have one: `status` is
 * null while the item is pending (or in flight: the scheduler keeps that in memory, and a
 * restart simply runs it again), then `succeeded` or `failed`, once.
 */
export const batchItems = sqliteTable(
  'batch_items',
  {
    batchId: text('batch_id').notNull(),
    idx: integer('idx').notNull(),
    customId: text('custom_id'),
    /** The target endpoint's request body, JSON (checked at create time). */
    body: text('body').notNull(),
    /** The model as the body names it, and admission's estimates (the pipeline's own rule). */
    model: text('model').notNull(),
    promptEstimate: integer('prompt_estimate').notNull(),
    maxOutputTokens: integer('max_output_tokens'),
    status: text('status', { enum: ['succeeded', 'failed'] }),
    /** The endpoint's JSON reply (succeeded). */
    response: text('response'),
    /** JSON `{ message, code, status }` (failed). */
    error: text('error'),
    /** JSON usage in the generation record's words. */
    usage: text('usage'),
    requestId: text('request_id'),
    finishedAt: integer('finished_at'),
    /** Instances sharing a database: the one that claimed the pending item, until when (epoch ms). */
    leaseOwner: text('lease_owner'),
    leaseUntil: integer('lease_until'),
  },
  // (batch, status, idx): the pending items in order (status null), and each kind of result in order (exports)
  (t) => [primaryKey({ columns: [t.batchId, t.idx] }), index('batch_items_status').on(t.batchId, t.status, t.idx)],
)

/**
 * Batches whose items are being checked and stored by a worker (create is not answered yet).
 * A row left here by a crash names items that no batch owns: the next start removes them.
 */
export const batchIngests = sqliteTable('batch_ingests', {
  batchId: text('batch_id').primaryKey(),
  startedAt: integer('started_at').notNull(),
})

/**
 * Credit reservations shared by several instances: the worst-case cost of an
 * admitted request, held against its key until its record (and spend) is written. Used when
 * the instances share a PostgreSQL database and no Redis; a single instance keeps them in memory.
 */
export const creditReservations = sqliteTable(
  'credit_reservations',
  {
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    usd: real('usd').notNull(),
    /** Epoch ms: a reservation whose request died without a record stops counting then. */
    expiresAt: integer('expires_at').notNull(),
  },
  (t) => [index('credit_reservations_key').on(t.apiKeyId, t.expiresAt)],
)
