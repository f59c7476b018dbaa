-- The upstream's ids of the output items of responses stored before stored_items: their keys were
-- given them, and may name them still (the gateway's own ids name their response and get no row).
INSERT INTO `stored_items` (`api_key_id`, `item_id`, `row_id`)
SELECT r.`api_key_id`, json_extract(o.value, '$.id'), r.`row_id`
FROM `stored_responses` r, json_each(CASE WHEN json_valid(r.`output_items`) AND json_type(r.`output_items`) = 'array' THEN r.`output_items` ELSE '[]' END) o
WHERE json_type(o.value, '$.id') = 'text'
  AND json_extract(o.value, '$.id') NOT GLOB '*_[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'
  AND NOT EXISTS (SELECT 1 FROM `stored_items` i WHERE i.`row_id` = r.`row_id`);
