CREATE TABLE `responses` (
	`id` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`model` text NOT NULL,
	`created_at` integer NOT NULL,
	`status` text NOT NULL,
	`previous_response_id` text,
	`conversation` text,
	`input_items` text NOT NULL,
	`output_items` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `responses_conversation` ON `responses` (`api_key_id`,`conversation`,`created_at`);