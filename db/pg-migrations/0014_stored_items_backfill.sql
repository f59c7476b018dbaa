-- The upstream's ids of the output items of responses stored before stored_items: their keys were
-- given them, and may name them still (the gateway's own ids name their response and get no row).
-- A \u0000 in some output text is read as a space: PostgreSQL's JSON refuses it, and only ids are read.
INSERT INTO "stored_items" ("api_key_id", "item_id", "row_id")
SELECT r."api_key_id", o.value->>'id', r."row_id"
FROM (SELECT "api_key_id", "row_id", replace("output_items", '\u0000', '\u0020')::json AS items FROM "stored_responses") r
CROSS JOIN LATERAL json_array_elements(CASE WHEN json_typeof(r.items) = 'array' THEN r.items ELSE '[]'::json END) AS o(value)
WHERE json_typeof(o.value->'id') = 'string'
  AND (o.value->>'id') !~ '^[a-z]+_[0-9a-f]{36}$'
  AND NOT EXISTS (SELECT 1 FROM "stored_items" i WHERE i."row_id" = r."row_id");
