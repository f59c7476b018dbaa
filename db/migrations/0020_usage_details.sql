ALTER TABLE `usage_hourly` ADD `cache_read_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `cache_write_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `reasoning_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The hours rolled up before these were kept: their parts from the records still stored, in one
-- pass over them (hours whose records were pruned already keep 0).
UPDATE `usage_hourly` SET `cache_read_tokens` = s.`r`, `cache_write_tokens` = s.`w`, `reasoning_tokens` = s.`z`
FROM (SELECT `account`, `model`, (`created_at` / 3600000) * 3600000 AS `hour`, sum(`cache_read_input_tokens`) AS `r`,
        sum(`cache_creation_input_tokens`) AS `w`, coalesce(sum(`reasoning_tokens`), 0) AS `z`
      FROM `generations` GROUP BY 1, 2, 3) AS s
WHERE `usage_hourly`.`account` = s.`account` AND `usage_hourly`.`hour` = s.`hour` AND `usage_hourly`.`model` = s.`model`;
