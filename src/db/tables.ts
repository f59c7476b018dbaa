// The metadata schema, declared once for both dialects: `declareTables` builds every table
// from a column kit, and schema.ts (SQLite) and pg-schema.ts (PostgreSQL) each call it with
// their own. The kits differ only in types: epoch ms, token and byte counts are INTEGER on
// SQLite and int8 on PostgreSQL, dollars REAL and double precision, flags an integer 0/1 and
// a boolean. A column added here is in both, and the stores' types (the SQLite tables' types,
// storage.ts) check every use of it. drizzle-kit generates each dialect's migrations from
// its file.
import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

/** SQLite's columns; its types are the kit's type (PostgreSQL's kit builds the same shapes). */
export const sqliteKit = {
  table: sqliteTable,
  text,
  int: (name: string) => integer(name),
  real: (name: string) => real(name),
  bool: (name: string) => integer(name, { mode: 'boolean' }),
  index,
  uniqueIndex,
  primaryKey,
}

export type ColumnKit = typeof sqliteKit

export function declareTables(k: ColumnKit) {
  const apiKeys = k.table(
    'api_keys',
    {
      id: k.text('id').primaryKey(),
      account: k.text('account').notNull().default('default'),
      name: k.text('name').notNull(),
      /** SHA-256 of the key, hex. The key itself is never stored. */
      keyHash: k.text('key_hash').notNull(),
      /** First characters of the key, for people to tell keys apart in lists. */
      keyPrefix: k.text('key_prefix').notNull(),
      status: k.text('status', { enum: ['active', 'inactive'] }).notNull().default('active'),
      /** USD granted; null = unlimited. */
      credits: k.real('credits'),
      spent: k.real('spent').notNull().default(0),
      /** Per-key requests-per-minute override; null = the configured default. */
      rpm: k.int('rpm'),
      createdAt: k.int('created_at').notNull(),
      lastUsedAt: k.int('last_used_at'),
      /** Epoch ms of the last change by a person (CLI/admin), watched by running servers. */
      updatedAt: k.int('updated_at').notNull(),
      /** The hash of the secret a rotation replaced, while it still works (a grace period); null when none. */
      previousKeyHash: k.text('previous_key_hash'),
      /** Epoch ms at which the previous secret stops working. */
      previousExpiresAt: k.int('previous_expires_at'),
    },
    (t) => [k.uniqueIndex('api_keys_hash').on(t.keyHash), k.index('api_keys_updated').on(t.updatedAt), k.index('api_keys_previous_hash').on(t.previousKeyHash)],
  )

  const files = k.table(
    'files',
    {
      id: k.text('id').primaryKey(),
      apiKeyId: k.text('api_key_id').notNull(),
      filename: k.text('filename').notNull(),
      purpose: k.text('purpose').notNull(),
      bytes: k.int('bytes').notNull(),
      mimeType: k.text('mime_type').notNull(),
      /** Epoch ms. */
      createdAt: k.int('created_at').notNull(),
      /** Epoch ms; null = never. */
      expiresAt: k.int('expires_at'),
      /** Where the blob store keeps the bytes (never derived from the filename). */
      blobKey: k.text('blob_key').notNull(),
      sha256: k.text('sha256'),
    },
    (t) => [k.index('files_key_created').on(t.apiKeyId, t.createdAt)],
  )

  const generations = k.table(
    'generations',
    {
      /**
       * The gateway's own id (`gen-…`), unique per record. Records made before it existed keep
       * the reply id they were stored under.
       */
      id: k.text('id').primaryKey(),
      /**
       * The id the client saw (chat/response/message id, usually the upstream's). Not unique:
       * an upstream may reuse one, and every record is kept.
       */
      replyId: k.text('reply_id').notNull().default(''),
      apiKeyId: k.text('api_key_id').notNull(),
      account: k.text('account').notNull(),
      endpoint: k.text('endpoint').notNull(),
      stream: k.bool('stream').notNull(),
      /** Canonical catalog id. */
      model: k.text('model').notNull(),
      provider: k.text('provider').notNull(),
      /** Epoch ms. */
      createdAt: k.int('created_at').notNull(),
      promptTokens: k.int('prompt_tokens').notNull().default(0),
      completionTokens: k.int('completion_tokens').notNull().default(0),
      totalTokens: k.int('total_tokens').notNull().default(0),
      cacheCreationInputTokens: k.int('cache_creation_input_tokens').notNull().default(0),
      cacheReadInputTokens: k.int('cache_read_input_tokens').notNull().default(0),
      reasoningTokens: k.int('reasoning_tokens'),
      finishReason: k.text('finish_reason'),
      /** Responses-style status (completed, requires_action, incomplete, failed). */
      status: k.text('status'),
      /** USD after discount; null when unpriced. */
      cost: k.real('cost'),
      unpriced: k.bool('unpriced').notNull().default(false),
      latencyMs: k.int('latency_ms'),
      ttftMs: k.int('ttft_ms'),
      /** Error message when the request failed. */
      error: k.text('error'),
      httpStatus: k.int('http_status'),
      batchId: k.text('batch_id'),
      /** The model id the serving provider was sent (its deployment's upstream id); null on records from before deployments. */
      deployment: k.text('deployment'),
      /** The upstream calls made, as JSON `[{provider, status, ms}]`, in order; null when none was made. */
      attempts: k.text('attempts'),
      /** The upstream reported no usage (some OpenAI-compatible servers): the gateway counted it with its own tokenizer. */
      usageCounted: k.bool('usage_counted').notNull().default(false),
      /** Answered from the response cache: no upstream call was made, and the cost is 0. */
      cached: k.bool('cached').notNull().default(false),
      /** Answered from a cassette (src/replay): no upstream call was made; the cost is 0 unless replay.bill. */
      replayed: k.bool('replayed').notNull().default(false),
      /**
       * How the reply says it was served, in its words, where the upstream said (null where not,
       * and on records from before these were kept): OpenAI's `service_tier`, Anthropic's `speed`
       * and `inference_geo`. The cost already counts them; these say why.
       */
      serviceTier: k.text('service_tier'),
      speed: k.text('speed'),
      inferenceGeo: k.text('inference_geo'),
      /**
       * The priced parts of the usage beyond the token columns, as JSON in the record's words
       * (generations/extras.ts): hour-long cache writes, audio tokens, web and file searches, the
       * image tool's tokens. Null when the reply had none (most), and on records from before.
       */
      usageExtras: k.text('usage_extras'),
    },
    (t) => [
      k.index('generations_key').on(t.apiKeyId, t.createdAt),
      k.index('generations_account_created').on(t.account, t.createdAt),
      k.index('generations_created').on(t.createdAt),
      k.index('generations_reply').on(t.replyId, t.apiKeyId, t.createdAt),
    ],
  )

  /**
   * Hourly rollup of generations per account and model, maintained on write so that the
   * usage report reads hundreds of rows, not millions.
   */
  const usageHourly = k.table(
    'usage_hourly',
    {
      account: k.text('account').notNull(),
      model: k.text('model').notNull(),
      /** Epoch ms of the UTC hour start. */
      hour: k.int('hour').notNull(),
      requests: k.int('requests').notNull().default(0),
      inputTokens: k.int('input_tokens').notNull().default(0),
      outputTokens: k.int('output_tokens').notNull().default(0),
      totalTokens: k.int('total_tokens').notNull().default(0),
      cost: k.real('cost').notNull().default(0),
      unpricedRequests: k.int('unpriced_requests').notNull().default(0),
      /**
       * Parts of the tokens above, as the records keep them: cache reads and writes (5-minute
       * and hour ones together) of the input, reasoning of the output. Hours rolled up before
       * these were kept count them from the records still stored then, 0 where none was.
       */
      cacheReadTokens: k.int('cache_read_tokens').notNull().default(0),
      cacheWriteTokens: k.int('cache_write_tokens').notNull().default(0),
      reasoningTokens: k.int('reasoning_tokens').notNull().default(0),
      /**
       * What else the costs count, as the records' `usage_extras` keep it: of the cache writes,
       * those made to last an hour; of the input and output, audio tokens; web and file
       * searches run; the image tool's model's tokens (its input and output, beside the
       * model's own). Hours rolled up before these were kept count them from the records
       * still stored then, 0 where none was.
       */
      cacheWrite1hTokens: k.int('cache_write_1h_tokens').notNull().default(0),
      inputAudioTokens: k.int('input_audio_tokens').notNull().default(0),
      outputAudioTokens: k.int('output_audio_tokens').notNull().default(0),
      webSearchRequests: k.int('web_search_requests').notNull().default(0),
      fileSearchRequests: k.int('file_search_requests').notNull().default(0),
      imageToolTokens: k.int('image_tool_tokens').notNull().default(0),
    },
    (t) => [k.uniqueIndex('usage_hourly_pk').on(t.account, t.hour, t.model)],
  )


  /**
   * Stored responses of responses-style threads, keyed by the gateway's own row id: the response
   * id a client saw (an upstream's, on the pass-through path) may repeat across keys or within
   * one (upstreams and proxies reuse ids), so it is a field a key's lookup reads, latest first,
   * never a key one client's save could overwrite another's with. `previous_row_id` chains rows.
   */
  const storedResponses = k.table(
    'stored_responses',
    {
      rowId: k.text('row_id').primaryKey(),
      /** The response id the client saw (`resp_…`). */
      id: k.text('id').notNull(),
      apiKeyId: k.text('api_key_id').notNull(),
      model: k.text('model').notNull(),
      /** Epoch ms. */
      createdAt: k.int('created_at').notNull(),
      status: k.text('status').notNull(),
      previousRowId: k.text('previous_row_id'),
      /** The response id this one continued, as the client gave it. */
      previousResponseId: k.text('previous_response_id'),
      conversation: k.text('conversation'),
      /** JSON: the input items this request added (system instructions excluded). */
      inputItems: k.text('input_items').notNull(),
      /** JSON: the reply's output items. */
      outputItems: k.text('output_items').notNull(),
      /** JSON: the response object as the client got it, without its output (retrieve). */
      response: k.text('response'),
      /** Stored bytes of the thread ending here (this row and every earlier one): its size bound. */
      threadBytes: k.int('thread_bytes').notNull().default(0),
    },
    // (previous row): the continuations of a row, which keep it from being pruned; (created): the oldest rows, which may be
    (t) => [
      k.index('stored_responses_key_id').on(t.apiKeyId, t.id, t.createdAt),
      k.index('stored_responses_conversation').on(t.apiKeyId, t.conversation, t.createdAt),
      k.index('stored_responses_previous').on(t.previousRowId),
      k.index('stored_responses_created').on(t.createdAt, t.rowId),
    ],
  )

  /**
   * The output items of a stored response whose ids its upstream made (a pass-through reply's
   * `msg_…`, `rs_…`, `fc_…`), one row each: whether a key was given an item, when it names one
   * by id (`item_reference`) for OpenAI's store to read. The gateway's own item ids name their response and need no row (item-ids.ts). A row
   * whose response is gone means nothing.
   */
  const storedItems = k.table(
    'stored_items',
    {
      apiKeyId: k.text('api_key_id').notNull(),
      itemId: k.text('item_id').notNull(),
      /** The stored response (stored_responses.row_id) that holds the item. */
      rowId: k.text('row_id').notNull(),
    },
    (t) => [k.index('stored_items_key_item').on(t.apiKeyId, t.itemId), k.index('stored_items_row').on(t.rowId)],
  )

  /**
   * The code-execution containers a reply handed a key (an OpenAI code interpreter call's
   * `container_id`, an Anthropic reply's `container`), one row a key and container: a container
   * lives in the operator's upstream account, which every key shares, and holds the files of the
   * key whose request made it, so a request may name one by id only when its key was given it
   * and it has not expired. Each reply that hands it again pushes its expiry on; expired rows
   * are pruned (retention.ts). Key ids are never reused, so a deactivated key's rows open nothing.
   */
  const containerGrants = k.table(
    'container_grants',
    {
      apiKeyId: k.text('api_key_id').notNull(),
      containerId: k.text('container_id').notNull(),
      /** Epoch ms: the upstream's own expiry where its reply said it, else the gateway's bound (containers/grants.ts). */
      expiresAt: k.int('expires_at').notNull(),
    },
    (t) => [k.primaryKey({ columns: [t.apiKeyId, t.containerId] }), k.index('container_grants_expires').on(t.expiresAt)],
  )

  /**
   * Conversations made through the Conversations API (`conv_…`), one row each: the key that made
   * it (another key's lookups never find it) and its metadata. Its items are conversation_items.
   */
  const conversations = k.table('conversations', {
    id: k.text('id').primaryKey(),
    apiKeyId: k.text('api_key_id').notNull(),
    /** Epoch ms. */
    createdAt: k.int('created_at').notNull(),
    /** JSON object of string pairs, or null. */
    metadata: k.text('metadata'),
  })

  /**
   * A conversation's items, in `seq` order (a time-ordered id, then the item's place in what was
   * added at once): those added through its items route and each turn's input and output. An
   * item id names one item of a conversation.
   */
  const conversationItems = k.table(
    'conversation_items',
    {
      conversationId: k.text('conversation_id').notNull(),
      seq: k.text('seq').notNull(),
      itemId: k.text('item_id').notNull(),
      /** JSON: the item as it is listed (with its id). */
      item: k.text('item').notNull(),
    },
    (t) => [k.primaryKey({ columns: [t.conversationId, t.seq] }), k.uniqueIndex('conversation_items_item').on(t.conversationId, t.itemId)],
  )

  /**
   * Batches (both batch APIs): one row per batch, with its counters kept on write so that a
   * poll reads one row. Times are epoch ms; null until the event happened.
   */
  const batches = k.table(
    'batches',
    {
      /** `batch_…` (OpenAI-shaped routes) or `msgbatch_…` (Anthropic Message Batches). */
      id: k.text('id').primaryKey(),
      apiKeyId: k.text('api_key_id').notNull(),
      /** The API that created it, whose shapes it is shown in. */
      family: k.text('family', { enum: ['openai', 'anthropic'] }).notNull(),
      /** `/v1/chat/completions`, `/v1/responses` or `/v1/messages`. */
      endpoint: k.text('endpoint').notNull(),
      inputFileId: k.text('input_file_id'),
      completionWindow: k.text('completion_window').notNull(),
      status: k.text('status', { enum: ['queued', 'processing', 'completed', 'cancelled', 'expired', 'failed'] }).notNull(),
      /** JSON object, as given. */
      metadata: k.text('metadata'),
      /** `settings.concurrency` as given (null: the configured maximum). */
      concurrency: k.int('concurrency'),
      /** Seconds the output files live (OpenAI `output_expires_after`); null: until deleted. */
      outputExpiresAfter: k.int('output_expires_after'),
      total: k.int('total').notNull(),
      succeeded: k.int('succeeded').notNull().default(0),
      /** Every failed item, those failed by a cancel or an expiry included. */
      failed: k.int('failed').notNull().default(0),
      cancelledItems: k.int('cancelled_items').notNull().default(0),
      expiredItems: k.int('expired_items').notNull().default(0),
      /** JSON array of `{ code, message }`: why the batch failed. */
      errors: k.text('errors'),
      outputFileId: k.text('output_file_id'),
      errorFileId: k.text('error_file_id'),
      createdAt: k.int('created_at').notNull(),
      expiresAt: k.int('expires_at').notNull(),
      inProgressAt: k.int('in_progress_at'),
      completedAt: k.int('completed_at'),
      cancelledAt: k.int('cancelled_at'),
      failedAt: k.int('failed_at'),
      expiredAt: k.int('expired_at'),
      /** Every item has its result and the output files are written: nothing more will change. */
      endedAt: k.int('ended_at'),
      /** Instances sharing a database: the one writing the output files, until when (epoch ms). */
      finalizer: k.text('finalizer'),
      finalizerUntil: k.int('finalizer_until'),
      /** Instances sharing a database: one kept out of the batch's places (leases.ts), until when (epoch ms). */
      claimWaiter: k.text('claim_waiter'),
      claimWaiterUntil: k.int('claim_waiter_until'),
      /** Its items (bodies and results) were removed then, `batches.retention_days` after it ended (epoch ms). */
      itemsPrunedAt: k.int('items_pruned_at'),
    },
    // (ended, of those whose items are kept): the retention's next batch, past none it has emptied
    (t) => [
      k.index('batches_key_created').on(t.apiKeyId, t.createdAt),
      k.index('batches_open').on(t.endedAt),
      k.index('batches_input_file').on(t.inputFileId),
      k.index('batches_items_kept').on(t.endedAt).where(sql`${t.itemsPrunedAt} IS NULL`),
    ],
  )

  /**
   * The items of a batch, in input order, with their result once they have one: `status` is
   * null while the item is pending (or in flight: the scheduler keeps that in memory, and a
   * restart simply runs it again), then `succeeded` or `failed`, once.
   */
  const batchItems = k.table(
    'batch_items',
    {
      batchId: k.text('batch_id').notNull(),
      idx: k.int('idx').notNull(),
      customId: k.text('custom_id'),
      /** The target endpoint's request body, JSON (checked at create time). */
      body: k.text('body').notNull(),
      /** The model as the body names it, and admission's estimates (the pipeline's own rule). */
      model: k.text('model').notNull(),
      promptEstimate: k.int('prompt_estimate').notNull(),
      maxOutputTokens: k.int('max_output_tokens'),
      /** Chat's `n`: each of the choices may take the whole output cap (null: one). */
      choices: k.int('choices'),
      /** The processing tier it is held at where that is priced apart (OpenAI's `priority`; null: standard). */
      serviceTier: k.text('service_tier'),
      /**
       * What it may be billed for beyond its prompt and output cap (its server tools' searches and
       * what they bring back, an answer in audio), JSON as billing/server-tools.ts reckons it, with the
       * price its prompt can be billed at when below an hour's cache write (`promptWrites`,
       * batches/item-hold.ts); null: nothing (and an item stored before the column was).
       */
      beyond: k.text('beyond'),
      status: k.text('status', { enum: ['succeeded', 'failed'] }),
      /** The endpoint's JSON reply (succeeded). */
      response: k.text('response'),
      /** JSON `{ message, code, status }` (failed). */
      error: k.text('error'),
      /** JSON usage in the generation record's words. */
      usage: k.text('usage'),
      requestId: k.text('request_id'),
      finishedAt: k.int('finished_at'),
      /** Instances sharing a database: the one that claimed the pending item, until when (epoch ms). */
      leaseOwner: k.text('lease_owner'),
      leaseUntil: k.int('lease_until'),
    },
    // (batch, status, idx): the pending items in order (status null), and each kind of result in order (exports);
    // (batch) of the items claimed and not ended: a claim counts them (leases.ts) under the batch row's
    // lock, at most the batch's concurrency of them, where the pending ones are every item not run yet
    (t) => [
      k.primaryKey({ columns: [t.batchId, t.idx] }),
      k.index('batch_items_status').on(t.batchId, t.status, t.idx),
      k.index('batch_items_claimed').on(t.batchId).where(sql`${t.status} IS NULL AND ${t.leaseOwner} IS NOT NULL`),
    ],
  )

  /**
   * Batches whose items are being checked and stored by a worker (create is not answered yet).
   * A row left here by a crash names items that no batch owns: the next start removes them.
   */
  const batchIngests = k.table('batch_ingests', {
    batchId: k.text('batch_id').primaryKey(),
    startedAt: k.int('started_at').notNull(),
  })

  /**
   * Credit reservations shared by several instances: the worst-case cost of an
   * admitted request, held against its key until its record (and spend) is written. Used when
   * the instances share a PostgreSQL database and no Redis; a single instance keeps them in memory.
   */
  const creditReservations = k.table(
    'credit_reservations',
    {
      id: k.text('id').primaryKey(),
      apiKeyId: k.text('api_key_id').notNull(),
      usd: k.real('usd').notNull(),
      /** Epoch ms: a reservation whose request died without a record stops counting then. */
      expiresAt: k.int('expires_at').notNull(),
    },
    (t) => [k.index('credit_reservations_key').on(t.apiKeyId, t.expiresAt)],
  )

  /**
   * The exact response cache of an instance without Redis: one upstream answer (2xx) per key
   * (the upstream request's match key and its scope, hashed), dropped once expired or when
   * the store is past its bound, used longest ago first.
   */
  const responseCache = k.table(
    'response_cache',
    {
      key: k.text('key').primaryKey(),
      status: k.int('status').notNull(),
      contentType: k.text('content_type'),
      /** The upstream's body as it came (JSON, or the SSE text of a stream). */
      body: k.text('body').notNull(),
      bytes: k.int('bytes').notNull(),
      /** Epoch ms. */
      createdAt: k.int('created_at').notNull(),
      expiresAt: k.int('expires_at').notNull(),
      /** Epoch ms of the last hit (or the store): the order of eviction. */
      usedAt: k.int('used_at').notNull(),
    },
    (t) => [k.index('response_cache_used').on(t.usedAt)],
  )

  /**
   * How far pruning has reached, per table (`generations`): every row made before `pruned_before`
   * (epoch ms) may have been deleted, none made at or after it was. Written before the deletes it
   * allows, and only ever raised. A spool written again after its records were pruned tells
   * them by it (Recorder.replaySpools): the id check cannot see a deleted row.
   */
  const pruneMarks = k.table('prune_marks', {
    what: k.text('what').primaryKey(),
    prunedBefore: k.int('pruned_before').notNull(),
  })
  return { apiKeys, files, generations, usageHourly, storedResponses, storedItems, containerGrants, conversations, conversationItems, batches, batchItems, batchIngests, creditReservations, responseCache, pruneMarks }
}
