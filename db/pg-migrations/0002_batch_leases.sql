ALTER TABLE "batch_items" ADD COLUMN "lease_owner" text;--> statement-breakpoint
ALTER TABLE "batch_items" ADD COLUMN "lease_until" bigint;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "finalizer" text;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "finalizer_until" bigint;