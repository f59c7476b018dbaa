CREATE TABLE "stored_responses" (
	"row_id" text PRIMARY KEY NOT NULL,
	"id" text NOT NULL,
	"api_key_id" text NOT NULL,
	"model" text NOT NULL,
	"created_at" bigint NOT NULL,
	"status" text NOT NULL,
	"previous_row_id" text,
	"previous_response_id" text,
	"conversation" text,
	"input_items" text NOT NULL,
	"output_items" text NOT NULL,
	"response" text,
	"thread_bytes" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX "stored_responses_key_id" ON "stored_responses" USING btree ("api_key_id","id","created_at");--> statement-breakpoint
CREATE INDEX "stored_responses_conversation" ON "stored_responses" USING btree ("api_key_id","conversation","created_at");--> statement-breakpoint
-- threads stored before: their ids were unique, so a row's id names its row (the size of each
-- earlier thread is counted from this row alone: a bound for what is added from now on)
INSERT INTO "stored_responses" ("row_id", "id", "api_key_id", "model", "created_at", "status", "previous_row_id", "previous_response_id", "conversation", "input_items", "output_items", "response", "thread_bytes")
SELECT 'sr_' || "id", "id", "api_key_id", "model", "created_at", "status", CASE WHEN "previous_response_id" IS NULL THEN NULL ELSE 'sr_' || "previous_response_id" END, "previous_response_id", "conversation", "input_items", "output_items", NULL, octet_length("input_items") + octet_length("output_items") FROM "responses";
