ALTER TABLE `batches` ADD `items_pruned_at` integer;--> statement-breakpoint
CREATE INDEX `batches_items_kept` ON `batches` (`ended_at`) WHERE "batches"."items_pruned_at" IS NULL;--> statement-breakpoint
CREATE INDEX `stored_responses_previous` ON `stored_responses` (`previous_row_id`);--> statement-breakpoint
CREATE INDEX `stored_responses_created` ON `stored_responses` (`created_at`,`row_id`);