// The metadata schema on PostgreSQL: the same tables and columns as schema.ts (SQLite), in
// PostgreSQL's types (epoch ms and byte counts need int8). drizzle-kit generates
// db/pg-migrations from this file (drizzle.pg.config.ts).
import { bigint, boolean, doublePrecision, index, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'

export const apiKeys = pgTable(
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
    credits: doublePrecision('credits'),
    spent: doublePrecision('spent').notNull().default(0),
    /** Per-key requests-per-minute override; null = the configured default. */
    rpm: bigint('rpm', { mode: 'number' }),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    lastUsedAt: bigint('last_used_at', { mode: 'number' }),
    /** Epoch ms of the last change by a person (CLI/admin), watched by running servers. */
    updatedAt: bigint('updated_at', { mode: 'number' }).notNull(),
  },
  (t) => [uniqueIndex('api_keys_hash').on(t.keyHash), index('api_keys_updated').on(t.updatedAt)],
)

export const files = pgTable(
  'files',
  {
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    filename: text('filename').notNull(),
    purpose: text('purpose').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    mimeType: text('mime_type').notNull(),
    /** Epoch ms. */
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    /** Epoch ms; null = never. */
    expiresAt: bigint('expires_at', { mode: 'number' }),
    /** Where the blob store keeps the bytes (never derived from the filename). */
    blobKey: text('blob_key').notNull(),
    sha256: text('sha256'),
  },
  (t) => [index('files_key_created').on(t.apiKeyId, t.createdAt)],
)

export const generations = pgTable(
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
    stream: boolean('stream').notNull(),
    /** Canonical catalog id. */
    model: text('model').notNull(),
    provider: text('provider').notNull(),
    /** Epoch ms. */
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    promptTokens: bigint('prompt_tokens', { mode: 'number' }).notNull().default(0),
    completionTokens: bigint('completion_tokens', { mode: 'number' }).notNull().default(0),
    totalTokens: bigint('total_tokens', { mode: 'number' }).notNull().default(0),
    cacheCreationInputTokens: bigint('cache_creation_input_tokens', { mode: 'number' }).notNull().default(0),
    cacheReadInputTokens: bigint('cache_read_input_tokens', { mode: 'number' }).notNull().default(0),
    reasoningTokens: bigint('reasoning_tokens', { mode: 'number' }),
    finishReason: text('finish_reason'),
    /** Responses-style status (completed, requires_action, incomplete, failed). */
    status: text('status'),
    /** USD after discount; null when unpriced. */
    cost: doublePrecision('cost'),
    unpriced: boolean('unpriced').notNull().default(false),
    latencyMs: bigint('latency_ms', { mode: 'number' }),
    ttftMs: bigint('ttft_ms', { mode: 'number' }),
    /** Error message when the request failed. */
    error: text('error'),
    httpStatus: bigint('http_status', { mode: 'number' }),
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
export const usageHourly = pgTable(
  'usage_hourly',
  {
    account: text('account').notNull(),
    model: text('model').notNull(),
    /** Epoch ms of the UTC hour start. */
    hour: bigint('hour', { mode: 'number' }).notNull(),
    requests: bigint('requests', { mode: 'number' }).notNull().default(0),
    inputTokens: bigint('input_tokens', { mode: 'number' }).notNull().default(0),
    outputTokens: bigint('output_tokens', { mode: 'number' }).notNull().default(0),
    totalTokens: bigint('total_tokens', { mode: 'number' }).notNull().default(0),
    cost: doublePrecision('cost').notNull().default(0),
    unpricedRequests: bigint('unpriced_requests', { mode: 'number' }).notNull().default(0),
  },
  (t) => [uniqueIndex('usage_hourly_pk').on(t.account, t.hour, t.model)],
)


/**
 * Stored responses of responses-style threads, keyed by the gateway's own row id: the response
 * id a client saw (an upstream's, on the pass-through path) may repeat across keys or within
 * one (upstreams and proxies reuse ids), so it is a field a key's lookup reads, latest first,
 * never a key one client's save could overwrite another's with. `previous_row_id` chains rows.
 */
export const storedResponses = pgTable(
  'stored_responses',
  {
    rowId: text('row_id').primaryKey(),
    /** The response id the client saw (`resp_…`). */
    id: text('id').notNull(),
    apiKeyId: text('api_key_id').notNull(),
    model: text('model').notNull(),
    /** Epoch ms. */
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
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
    threadBytes: bigint('thread_bytes', { mode: 'number' }).notNull().default(0),
  },
  (t) => [index('stored_responses_key_id').on(t.apiKeyId, t.id, t.createdAt), index('stored_responses_conversation').on(t.apiKeyId, t.conversation, t.createdAt)],
)

/**
 * Batches (§2, §3): one row per batch, with its counters kept on write so that a
 * poll reads one row. Times are epoch ms; null until the event happened.
 */
export const batches = pgTable(
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
    concurrency: bigint('concurrency', { mode: 'number' }),
    /** Seconds the output files live (OpenAI `output_expires_after`); null: until deleted. */
    outputExpiresAfter: bigint('output_expires_after', { mode: 'number' }),
    total: bigint('total', { mode: 'number' }).notNull(),
    succeeded: bigint('succeeded', { mode: 'number' }).notNull().default(0),
    /** Every failed item, those failed by a cancel or an expiry included. */
    failed: bigint('failed', { mode: 'number' }).notNull().default(0),
    cancelledItems: bigint('cancelled_items', { mode: 'number' }).notNull().default(0),
    expiredItems: bigint('expired_items', { mode: 'number' }).notNull().default(0),
    /** JSON array of `{ code, message }`: why the batch failed. */
    errors: text('errors'),
    outputFileId: text('output_file_id'),
    errorFileId: text('error_file_id'),
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
    inProgressAt: bigint('in_progress_at', { mode: 'number' }),
    completedAt: bigint('completed_at', { mode: 'number' }),
    cancelledAt: bigint('cancelled_at', { mode: 'number' }),
    failedAt: bigint('failed_at', { mode: 'number' }),
    expiredAt: bigint('expired_at', { mode: 'number' }),
    /** Every item has its result and the output files are written: nothing more will change. */
    endedAt: bigint('ended_at', { mode: 'number' }),
    /** Instances sharing a database: the one writing the output files, until when (epoch ms). */
    finalizer: text('finalizer'),
    finalizerUntil: bigint('finalizer_until', { mode: 'number' }),
  },
  (t) => [index('batches_key_created').on(t.apiKeyId, t.createdAt), index('batches_open').on(t.endedAt), index('batches_input_file').on(t.inputFileId)],
)

/**
 * The items of a batch, in input order, with their result once they have one: `status` is
 * null while the item is pending (or in flight: the scheduler keeps that in memory, and a
 * restart simply runs it again), then `succeeded` or `failed`, once.
 */
export const batchItems = pgTable(
  'batch_items',
  {
    batchId: text('batch_id').notNull(),
    idx: bigint('idx', { mode: 'number' }).notNull(),
    customId: text('custom_id'),
    /** The target endpoint's request body, JSON (checked at create time). */
    body: text('body').notNull(),
    /** The model as the body names it, and admission's estimates (the pipeline's own rule). */
    model: text('model').notNull(),
    promptEstimate: bigint('prompt_estimate', { mode: 'number' }).notNull(),
    maxOutputTokens: bigint('max_output_tokens', { mode: 'number' }),
    status: text('status', { enum: ['succeeded', 'failed'] }),
    /** The endpoint's JSON reply (succeeded). */
    response: text('response'),
    /** JSON `{ message, code, status }` (failed). */
    error: text('error'),
    /** JSON usage in the generation record's words. */
    usage: text('usage'),
    requestId: text('request_id'),
    finishedAt: bigint('finished_at', { mode: 'number' }),
    /** Instances sharing a database: the one that claimed the pending item, until when (epoch ms). */
    leaseOwner: text('lease_owner'),
    leaseUntil: bigint('lease_until', { mode: 'number' }),
  },
  // (batch, status, idx): the pending items in order (status null), and each kind of result in order (exports)
  (t) => [primaryKey({ columns: [t.batchId, t.idx] }), index('batch_items_status').on(t.batchId, t.status, t.idx)],
)

/**
 * Batches whose items are being checked and stored by a worker (create is not answered yet).
 * A row left here by a crash names items that no batch owns: the next start removes them.
 */
export const batchIngests = pgTable('batch_ingests', {
  batchId: text('batch_id').primaryKey(),
  startedAt: bigint('started_at', { mode: 'number' }).notNull(),
})

/**
 * Credit reservations shared by several instances: the worst-case cost of an
 * admitted request, held against its key until its record (and spend) is written. Used when
 * the instances share a PostgreSQL database and no Redis; a single instance keeps them in memory.
 */
export const creditReservations = pgTable(
  'credit_reservations',
  {
    id: text('id').primaryKey(),
    apiKeyId: text('api_key_id').notNull(),
    usd: doublePrecision('usd').notNull(),
    /** Epoch ms: a reservation whose request died without a record stops counting then. */
    expiresAt: bigint('expires_at', { mode: 'number' }).notNull(),
  },
  (t) => [index('credit_reservations_key').on(t.apiKeyId, t.expiresAt)],
)
