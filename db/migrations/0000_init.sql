CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account` text DEFAULT 'default' NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`status` text DEFAULT 'active' NOT NULL,
	`credits` real,
	`spent` real DEFAULT 0 NOT NULL,
	`rpm` integer,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_updated` ON `api_keys` (`updated_at`);--> statement-breakpoint
CREATE TABLE `files` (
	`id` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`filename` text NOT NULL,
	`purpose` text NOT NULL,
	`bytes` integer NOT NULL,
	`mime_type` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`blob_key` text NOT NULL,
	`sha256` text
);
--> statement-breakpoint
CREATE INDEX `files_key_created` ON `files` (`api_key_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `generations` (
	`id` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`account` text NOT NULL,
	`endpoint` text NOT NULL,
	`stream` integer NOT NULL,
	`model` text NOT NULL,
	`provider` text NOT NULL,
	`created_at` integer NOT NULL,
	`prompt_tokens` integer DEFAULT 0 NOT NULL,
	`completion_tokens` integer DEFAULT 0 NOT NULL,
	`total_tokens` integer DEFAULT 0 NOT NULL,
	`cache_creation_input_tokens` integer DEFAULT 0 NOT NULL,
	`cache_read_input_tokens` integer DEFAULT 0 NOT NULL,
	`reasoning_tokens` integer,
	`finish_reason` text,
	`status` text,
	`cost` real,
	`unpriced` integer DEFAULT false NOT NULL,
	`latency_ms` integer,
	`ttft_ms` integer,
	`error` text,
	`http_status` integer,
	`batch_id` text
);
--> statement-breakpoint
CREATE INDEX `generations_key` ON `generations` (`api_key_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `generations_account_created` ON `generations` (`account`,`created_at`);--> statement-breakpoint
CREATE INDEX `generations_created` ON `generations` (`created_at`);--> statement-breakpoint
CREATE TABLE `usage_hourly` (
	`account` text NOT NULL,
	`model` text NOT NULL,
	`hour` integer NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`total_tokens` integer DEFAULT 0 NOT NULL,
	`cost` real DEFAULT 0 NOT NULL,
	`unpriced_requests` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `usage_hourly_pk` ON `usage_hourly` (`account`,`hour`,`model`);