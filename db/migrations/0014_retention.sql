ALTER TABLE `batches` ADD `items_pruned_at` integer;--> statement-breakpoint
CREATE INDEX `stored_responses_previous` ON `stored_responses` (`previous_row_id`);--> statement-breakpoint
CREATE INDEX `stored_responses_created` ON `stored_responses` (`created_at`);