ALTER TABLE `api_keys` ADD `previous_key_hash` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `previous_expires_at` integer;--> statement-breakpoint
CREATE INDEX `api_keys_previous_hash` ON `api_keys` (`previous_key_hash`);