CREATE TABLE `container_grants` (
	`api_key_id` text NOT NULL,
	`container_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`api_key_id`, `container_id`)
);
--> statement-breakpoint
CREATE INDEX `container_grants_expires` ON `container_grants` (`expires_at`);