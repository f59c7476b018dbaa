CREATE TABLE `credit_reservations` (
	`id` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`usd` real NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `credit_reservations_key` ON `credit_reservations` (`api_key_id`,`expires_at`);