ALTER TABLE `generations` ADD `service_tier` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `speed` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `inference_geo` text;