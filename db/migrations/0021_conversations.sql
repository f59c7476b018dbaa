CREATE TABLE `conversation_items` (
	`conversation_id` text NOT NULL,
	`seq` text NOT NULL,
	`item_id` text NOT NULL,
	`item` text NOT NULL,
	PRIMARY KEY(`conversation_id`, `seq`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `conversation_items_item` ON `conversation_items` (`conversation_id`,`item_id`);--> statement-breakpoint
CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`api_key_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`metadata` text
);
