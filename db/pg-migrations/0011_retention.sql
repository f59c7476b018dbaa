ALTER TABLE "batches" ADD COLUMN "items_pruned_at" bigint;--> statement-breakpoint
CREATE INDEX "batches_items_kept" ON "batches" USING btree ("ended_at") WHERE "batches"."items_pruned_at" IS NULL;--> statement-breakpoint
CREATE INDEX "stored_responses_previous" ON "stored_responses" USING btree ("previous_row_id");--> statement-breakpoint
CREATE INDEX "stored_responses_created" ON "stored_responses" USING btree ("created_at","row_id");