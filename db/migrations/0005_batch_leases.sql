ALTER TABLE `batch_items` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `batch_items` ADD `lease_until` integer;--> statement-breakpoint
ALTER TABLE `batches` ADD `finalizer` text;--> statement-breakpoint
ALTER TABLE `batches` ADD `finalizer_until` integer;