CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"account" text DEFAULT 'default' NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"status" text DEFAULT 'active' NOT NULL,
	"credits" double precision,
	"spent" double precision DEFAULT 0 NOT NULL,
	"rpm" bigint,
	"created_at" bigint NOT NULL,
	"last_used_at" bigint,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "batch_ingests" (
	"batch_id" text PRIMARY KEY NOT NULL,
	"started_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "batch_items" (
	"batch_id" text NOT NULL,
	"idx" bigint NOT NULL,
	"custom_id" text,
	"body" text NOT NULL,
	"model" text NOT NULL,
	"prompt_estimate" bigint NOT NULL,
	"max_output_tokens" bigint,
	"status" text,
	"response" text,
	"error" text,
	"usage" text,
	"request_id" text,
	"finished_at" bigint,
	CONSTRAINT "batch_items_batch_id_idx_pk" PRIMARY KEY("batch_id","idx")
);
--> statement-breakpoint
CREATE TABLE "batches" (
	"id" text PRIMARY KEY NOT NULL,
	"api_key_id" text NOT NULL,
	"family" text NOT NULL,
	"endpoint" text NOT NULL,
	"input_file_id" text,
	"completion_window" text NOT NULL,
	"status" text NOT NULL,
	"metadata" text,
	"concurrency" bigint,
	"output_expires_after" bigint,
	"total" bigint NOT NULL,
	"succeeded" bigint DEFAULT 0 NOT NULL,
	"failed" bigint DEFAULT 0 NOT NULL,
	"cancelled_items" bigint DEFAULT 0 NOT NULL,
	"expired_items" bigint DEFAULT 0 NOT NULL,
	"errors" text,
	"output_file_id" text,
	"error_file_id" text,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"in_progress_at" bigint,
	"completed_at" bigint,
	"cancelled_at" bigint,
	"failed_at" bigint,
	"expired_at" bigint,
	"ended_at" bigint
);
--> statement-breakpoint
CREATE TABLE "files" (
	"id" text PRIMARY KEY NOT NULL,
	"api_key_id" text NOT NULL,
	"filename" text NOT NULL,
	"purpose" text NOT NULL,
	"bytes" bigint NOT NULL,
	"mime_type" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint,
	"blob_key" text NOT NULL,
	"sha256" text
);
--> statement-breakpoint
CREATE TABLE "generations" (
	"id" text PRIMARY KEY NOT NULL,
	"reply_id" text DEFAULT '' NOT NULL,
	"api_key_id" text NOT NULL,
	"account" text NOT NULL,
	"endpoint" text NOT NULL,
	"stream" boolean NOT NULL,
	"model" text NOT NULL,
	"provider" text NOT NULL,
	"created_at" bigint NOT NULL,
	"prompt_tokens" bigint DEFAULT 0 NOT NULL,
	"completion_tokens" bigint DEFAULT 0 NOT NULL,
	"total_tokens" bigint DEFAULT 0 NOT NULL,
	"cache_creation_input_tokens" bigint DEFAULT 0 NOT NULL,
	"cache_read_input_tokens" bigint DEFAULT 0 NOT NULL,
	"reasoning_tokens" bigint,
	"finish_reason" text,
	"status" text,
	"cost" double precision,
	"unpriced" boolean DEFAULT false NOT NULL,
	"latency_ms" bigint,
	"ttft_ms" bigint,
	"error" text,
	"http_status" bigint,
	"batch_id" text
);
--> statement-breakpoint
CREATE TABLE "responses" (
	"id" text PRIMARY KEY NOT NULL,
	"api_key_id" text NOT NULL,
	"model" text NOT NULL,
	"created_at" bigint NOT NULL,
	"status" text NOT NULL,
	"previous_response_id" text,
	"conversation" text,
	"input_items" text NOT NULL,
	"output_items" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "usage_hourly" (
	"account" text NOT NULL,
	"model" text NOT NULL,
	"hour" bigint NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"input_tokens" bigint DEFAULT 0 NOT NULL,
	"output_tokens" bigint DEFAULT 0 NOT NULL,
	"total_tokens" bigint DEFAULT 0 NOT NULL,
	"cost" double precision DEFAULT 0 NOT NULL,
	"unpriced_requests" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_updated" ON "api_keys" USING btree ("updated_at");--> statement-breakpoint
CREATE INDEX "batch_items_status" ON "batch_items" USING btree ("batch_id","status","idx");--> statement-breakpoint
CREATE INDEX "batches_key_created" ON "batches" USING btree ("api_key_id","created_at");--> statement-breakpoint
CREATE INDEX "batches_open" ON "batches" USING btree ("ended_at");--> statement-breakpoint
CREATE INDEX "batches_input_file" ON "batches" USING btree ("input_file_id");--> statement-breakpoint
CREATE INDEX "files_key_created" ON "files" USING btree ("api_key_id","created_at");--> statement-breakpoint
CREATE INDEX "generations_key" ON "generations" USING btree ("api_key_id","created_at");--> statement-breakpoint
CREATE INDEX "generations_account_created" ON "generations" USING btree ("account","created_at");--> statement-breakpoint
CREATE INDEX "generations_created" ON "generations" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "generations_reply" ON "generations" USING btree ("reply_id","api_key_id","created_at");--> statement-breakpoint
CREATE INDEX "responses_conversation" ON "responses" USING btree ("api_key_id","conversation","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "usage_hourly_pk" ON "usage_hourly" USING btree ("account","hour","model");