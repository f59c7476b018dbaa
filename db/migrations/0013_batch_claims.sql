ALTER TABLE `batches` ADD `claim_waiter` text;--> statement-breakpoint
ALTER TABLE `batches` ADD `claim_waiter_until` integer;--> statement-breakpoint
CREATE INDEX `batch_items_claimed` ON `batch_items` (`batch_id`) WHERE "batch_items"."status" IS NULL AND "batch_items"."lease_owner" IS NOT NULL;