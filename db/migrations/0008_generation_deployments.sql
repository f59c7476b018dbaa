ALTER TABLE `generations` ADD `deployment` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `attempts` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `usage_counted` integer DEFAULT false NOT NULL;