-- The program's process of a Lua program suite run apart from its tests (sandbox/runner.py run_suite_apart; after
-- plain_data.lua): the program runs as the main chunk, and at its end answers the tests' requests on fd 3 with
-- replies on fd 4 until the tests' process is done, finding names among the chunk's locals (MultiPL-E's functions
-- are `local function`s) and globals. What its functions return or raise goes back as plain data.
local function answer(scope, request)
  if type(request) ~= 'table' then return {error = 'a request that is not a table'} end
  if request.names then
    local defined = {}
    for _, name in ipairs(request.names) do
      local value = scope(name)
      if type(value) == 'function' then defined[name] = {['function'] = true}
      elseif value ~= nil then defined[name] = {value = value} end
    end
    return {defined = defined}
  end
  local function_ = scope(request.call)
  if type(function_) ~= 'function' then return {error = 'the program has no function ' .. tostring(request.call)} end
  local results = table.pack(pcall(function_, table.unpack(request.args or {}, 1, request.count or 0)))
  if not results[1] then return {error = tostring(results[2])} end
  return {value = results[2], args = request.args}
end

-- Called as the program chunk's last statement: its locals are those of the caller (level 2).
function __judge_serve()
  local locals, level_index = {}, 1
  while true do
    local name, value = debug.getlocal(2, level_index)
    if name == nil then break end
    locals[name] = value
    level_index = level_index + 1
  end
  local function scope(name)
    if type(name) ~= 'string' then return nil end
    if locals[name] ~= nil then return locals[name] end
    return rawget(_G, name)
  end
  local requests, replies = assert(io.open('/dev/fd/3', 'rb')), assert(io.open('/dev/fd/4', 'wb'))
  while true do
    local request = PlainData.receive(requests)
    if request == nil then break end
    local reply = answer(scope, request)
    local ok, failure = pcall(PlainData.send, replies, reply)
    if not ok then
      PlainData.send(replies, {error = 'the program answered with what is not plain data: ' .. tostring(failure)})
    end
  end
end

local program_path = arg[0]
local source = assert(io.open(program_path, 'rb')):read('a')
local chunk = assert(load(source .. '\n__judge_serve()\n', '@' .. program_path, 't'))
chunk(table.unpack(arg))
io.stdout:flush()
os.exit(true)
