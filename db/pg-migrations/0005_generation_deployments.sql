ALTER TABLE "generations" ADD COLUMN "deployment" text;--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "attempts" text;--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "usage_counted" boolean DEFAULT false NOT NULL;