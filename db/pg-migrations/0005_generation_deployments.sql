ALTER TABLE "generations" ADD COLUMN "deployment" text;--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "attempts" text;