CREATE TABLE "conversation_items" (
	"conversation_id" text NOT NULL,
	"seq" text NOT NULL,
	"item_id" text NOT NULL,
	"item" text NOT NULL,
	CONSTRAINT "conversation_items_conversation_id_seq_pk" PRIMARY KEY("conversation_id","seq")
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" text PRIMARY KEY NOT NULL,
	"api_key_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"metadata" text
);
--> statement-breakpoint
CREATE UNIQUE INDEX "conversation_items_item" ON "conversation_items" USING btree ("conversation_id","item_id");