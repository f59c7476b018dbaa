CREATE TABLE "stored_items" (
	"api_key_id" text NOT NULL,
	"item_id" text NOT NULL,
	"row_id" text NOT NULL
);
--> statement-breakpoint
CREATE INDEX "stored_items_key_item" ON "stored_items" USING btree ("api_key_id","item_id");--> statement-breakpoint
CREATE INDEX "stored_items_row" ON "stored_items" USING btree ("row_id");