CREATE TABLE `response_cache` (
	`key` text PRIMARY KEY NOT NULL,
	`status` integer NOT NULL,
	`content_type` text,
	`body` text NOT NULL,
	`bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `response_cache_used` ON `response_cache` (`used_at`);--> statement-breakpoint
ALTER TABLE `generations` ADD `cached` integer DEFAULT false NOT NULL;