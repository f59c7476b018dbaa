-- wrk request script: method, body and headers come from the environment so one file
-- serves every call the bench makes (BENCH_HEADERS is "name: value" lines).
wrk.method = os.getenv("BENCH_METHOD") or "GET"
local body = os.getenv("BENCH_BODY")
if body and body ~= "" then wrk.body = body end
local headers = os.getenv("BENCH_HEADERS") or ""
for line in string.gmatch(headers, "[^\n]+") do
  local name, value = line:match("^([^:]+):%s*(.*)$")
  if name then wrk.headers[name] = value end
end
