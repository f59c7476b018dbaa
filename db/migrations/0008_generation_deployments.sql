ALTER TABLE `generations` ADD `deployment` text;--> statement-breakpoint
ALTER TABLE `generations` ADD `attempts` text;