CREATE TABLE `batch_ingests` (
	`batch_id` text PRIMARY KEY NOT NULL,
	`started_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `batch_items` (
	`batch_id` text NOT NULL,
	`idx` integer NOT NULL,
	`custom_id` text,
	`body` text NOT NULL,
	`model` text NOT NULL,
	`prompt_estimate` integer NOT NULL,
	`max_output_tokens` integer,
	`status` text,
	`response` text,
	`error` text,
	`usage` text,
	`request_id` text,
	`finished_at` integer,
	PRIMARY KEY(`batch_id`, `idx`)
);
--> statement-breakpoint
CREATE INDEX `batch_items_status` ON `batch_items` (`batch_id`,`status`,`idx`);--> statement-breakpoint
CREATE TABLE `batches` (
	`id` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`family` text NOT NULL,
	`endpoint` text NOT NULL,
	`input_file_id` text,
	`completion_window` text NOT NULL,
	`status` text NOT NULL,
	`metadata` text,
	`concurrency` integer,
	`output_expires_after` integer,
	`total` integer NOT NULL,
	`succeeded` integer DEFAULT 0 NOT NULL,
	`failed` integer DEFAULT 0 NOT NULL,
	`cancelled_items` integer DEFAULT 0 NOT NULL,
	`expired_items` integer DEFAULT 0 NOT NULL,
	`errors` text,
	`output_file_id` text,
	`error_file_id` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`in_progress_at` integer,
	`completed_at` integer,
	`cancelled_at` integer,
	`failed_at` integer,
	`expired_at` integer,
	`ended_at` integer
);
--> statement-breakpoint
CREATE INDEX `batches_key_created` ON `batches` (`api_key_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `batches_open` ON `batches` (`ended_at`);--> statement-breakpoint
CREATE INDEX `batches_input_file` ON `batches` (`input_file_id`);