ALTER TABLE `usage_hourly` ADD `cache_write_1h_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `input_audio_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `output_audio_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `web_search_requests` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `file_search_requests` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage_hourly` ADD `image_tool_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The hours rolled up before these were kept: their sums from the records still stored, in one
-- pass over those with any (hours whose records were pruned already keep 0).
UPDATE `usage_hourly` SET `cache_write_1h_tokens` = s.`h`, `input_audio_tokens` = s.`ai`, `output_audio_tokens` = s.`ao`,
  `web_search_requests` = s.`ws`, `file_search_requests` = s.`fs`, `image_tool_tokens` = s.`it`
FROM (SELECT `account`, `model`, (`created_at` / 3600000) * 3600000 AS `hour`,
        coalesce(sum(json_extract(`usage_extras`, '$.cache_write_1h_tokens')), 0) AS `h`,
        coalesce(sum(json_extract(`usage_extras`, '$.audio_input_tokens')), 0) AS `ai`,
        coalesce(sum(json_extract(`usage_extras`, '$.audio_output_tokens')), 0) AS `ao`,
        coalesce(sum(json_extract(`usage_extras`, '$.web_searches')), 0) AS `ws`,
        coalesce(sum(json_extract(`usage_extras`, '$.file_searches')), 0) AS `fs`,
        coalesce(sum(json_extract(`usage_extras`, '$.image_tool.input_tokens')), 0) + coalesce(sum(json_extract(`usage_extras`, '$.image_tool.output_tokens')), 0) AS `it`
      FROM `generations` WHERE `usage_extras` IS NOT NULL GROUP BY 1, 2, 3) AS s
WHERE `usage_hourly`.`account` = s.`account` AND `usage_hourly`.`hour` = s.`hour` AND `usage_hourly`.`model` = s.`model`;
