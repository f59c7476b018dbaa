ALTER TABLE "generations" ADD COLUMN "service_tier" text;--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "speed" text;--> statement-breakpoint
ALTER TABLE "generations" ADD COLUMN "inference_geo" text;