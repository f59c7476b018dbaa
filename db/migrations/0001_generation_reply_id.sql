ALTER TABLE `generations` ADD `reply_id` text DEFAULT '' NOT NULL;--> statement-breakpoint
-- Hand-added: records stored before this migration were keyed by the reply id; keep it as their reply id too.
UPDATE `generations` SET `reply_id` = `id` WHERE `reply_id` = '';--> statement-breakpoint
CREATE INDEX `generations_reply` ON `generations` (`reply_id`,`api_key_id`,`created_at`);
