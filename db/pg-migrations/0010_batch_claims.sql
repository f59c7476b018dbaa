ALTER TABLE "batches" ADD COLUMN "claim_waiter" text;--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "claim_waiter_until" bigint;--> statement-breakpoint
CREATE INDEX "batch_items_claimed" ON "batch_items" USING btree ("batch_id") WHERE "batch_items"."status" IS NULL AND "batch_items"."lease_owner" IS NOT NULL;