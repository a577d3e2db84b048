-- The tests' process of a Lua program suite run apart from the program (sandbox/runner.py run_suite_apart; after
-- plain_data.lua). It reads the tests' code on stdin and runs it; the names the tests use that Lua does not define
-- are the program's: asked for on fd 4, answered on fd 3, its functions called there. Modules come only from Lua's
-- own directories (never ./, which the program can write). fd 5 hears that the tests all ran: where they end in
-- os.exit (LuaUnit's os.exit(lu.LuaUnit.run())), with status 0.
local replies, requests = assert(io.open('/dev/fd/3', 'rb')), assert(io.open('/dev/fd/4', 'wb'))
local said = assert(io.open('/dev/fd/5', 'wb'))
local KEYWORDS = {}
for word in ([[and break do else elseif end false for function goto if in local nil not or repeat return then true
  until while]]):gmatch('%a+') do KEYWORDS[word] = true end

local function readable_only(path)
  local kept = {}
  for entry in path:gmatch('[^;]+') do
    if entry:sub(1, 1) == '/' and not entry:find('^/sandbox') and not entry:find('^/tmp') then kept[#kept + 1] = entry end
  end
  return table.concat(kept, ';')
end
package.path, package.cpath = readable_only(package.path), readable_only(package.cpath)

local function ask(request)
  PlainData.send(requests, request)
  local reply = PlainData.receive(replies)
  if type(reply) ~= 'table' then error('the program ended before its tests did', 0) end
  return reply
end

-- Tables the function changed in place, changed so here too.
local function copy_back(args, changed)
  if type(changed) ~= 'table' then return end
  for index = 1, args.n do
    local arg, now = args[index], changed[index]
    if type(arg) == 'table' and type(now) == 'table' and getmetatable(arg) == nil then
      for key in pairs(arg) do arg[key] = nil end
      for key, item in pairs(now) do arg[key] = item end
    end
  end
end

local function stub(name)
  return function(...)
    local args = table.pack(...)
    local reply = ask({call = name, args = args, count = args.n})
    if reply.error ~= nil then error('in the program: ' .. tostring(reply.error), 2) end
    copy_back(args, reply.args)
    return reply.value
  end
end

local function define_program_names(code)
  local wanted, seen = {}, {}
  for name in code:gmatch('[%a_][%w_]*') do
    if not seen[name] and not KEYWORDS[name] and _G[name] == nil then wanted[#wanted + 1] = name end
    seen[name] = true
  end
  local defined = ask({names = wanted}).defined
  for _, name in ipairs(wanted) do
    local entry = type(defined) == 'table' and defined[name]
    if type(entry) == 'table' then _G[name] = entry['function'] and stub(name) or entry.value end
  end
end

local function done()
  said:write('done')
  said:flush()
end

local exit = os.exit
os.exit = function(code, close)
  if code == nil or code == true or code == 0 then done() end
  exit(code, close)
end
arg = {[0] = 'tests.lua'}  -- as if run as `lua tests.lua` (LuaUnit reads its options there)
local code = io.read('a')
define_program_names(code)
assert(load(code, '=tests.lua', 't'))()
done()
