CREATE TABLE "response_cache" (
	"key" text PRIMARY KEY NOT NULL,
	"status" bigint NOT NULL,
	"content_type" text,
	"body" text NOT NULL,
	"bytes" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "cached" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "response_cache_used" ON "response_cache" USING btree ("used_at");