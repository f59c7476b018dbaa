ALTER TABLE "usage_hourly" ADD COLUMN "cache_write_1h_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_hourly" ADD COLUMN "input_audio_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_hourly" ADD COLUMN "output_audio_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_hourly" ADD COLUMN "web_search_requests" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_hourly" ADD COLUMN "file_search_requests" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "usage_hourly" ADD COLUMN "image_tool_tokens" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
-- The hours rolled up before these were kept: their sums from the records still stored, in one
-- pass over those with any (hours whose records were pruned already keep 0).
UPDATE "usage_hourly" SET "cache_write_1h_tokens" = s."h", "input_audio_tokens" = s."ai", "output_audio_tokens" = s."ao",
  "web_search_requests" = s."ws", "file_search_requests" = s."fs", "image_tool_tokens" = s."it"
FROM (SELECT "account", "model", ("created_at" / 3600000) * 3600000 AS "hour",
        coalesce(sum((x ->> 'cache_write_1h_tokens')::bigint), 0) AS "h",
        coalesce(sum((x ->> 'audio_input_tokens')::bigint), 0) AS "ai",
        coalesce(sum((x ->> 'audio_output_tokens')::bigint), 0) AS "ao",
        coalesce(sum((x ->> 'web_searches')::bigint), 0) AS "ws",
        coalesce(sum((x ->> 'file_searches')::bigint), 0) AS "fs",
        coalesce(sum((x #>> '{image_tool,input_tokens}')::bigint), 0) + coalesce(sum((x #>> '{image_tool,output_tokens}')::bigint), 0) AS "it"
      FROM (SELECT "account", "model", "created_at", "usage_extras"::jsonb AS x FROM "generations" WHERE "usage_extras" IS NOT NULL) AS r
      GROUP BY 1, 2, 3) AS s
WHERE "usage_hourly"."account" = s."account" AND "usage_hourly"."hour" = s."hour" AND "usage_hourly"."model" = s."model";
