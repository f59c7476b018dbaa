CREATE TABLE "credit_reservations" (
	"id" text PRIMARY KEY NOT NULL,
	"api_key_id" text NOT NULL,
	"usd" double precision NOT NULL,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "credit_reservations_key" ON "credit_reservations" USING btree ("api_key_id","expires_at");