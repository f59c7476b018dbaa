ALTER TABLE "api_keys" ADD COLUMN "previous_key_hash" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "previous_expires_at" bigint;--> statement-breakpoint
CREATE INDEX "api_keys_previous_hash" ON "api_keys" USING btree ("previous_key_hash");