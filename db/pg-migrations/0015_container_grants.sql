CREATE TABLE "container_grants" (
	"api_key_id" text NOT NULL,
	"container_id" text NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "container_grants_api_key_id_container_id_pk" PRIMARY KEY("api_key_id","container_id")
);
--> statement-breakpoint
CREATE INDEX "container_grants_expires" ON "container_grants" USING btree ("expires_at");