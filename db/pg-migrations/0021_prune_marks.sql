CREATE TABLE "prune_marks" (
	"what" text PRIMARY KEY NOT NULL,
	"pruned_before" bigint NOT NULL
);
