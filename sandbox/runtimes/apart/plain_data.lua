-- Messages between a program suite's tests and the program, each in a process of its own (sandbox/runner.py
-- run_suite_apart): its length (8 bytes, little-endian), then the value in a small binary form read without `load`:
-- a tag, then n (nil), t, f, an integer (i), a float (d), a string (s), or a table (T: its pair count, then its keys
-- and values). Plain data only: functions, threads and userdata cannot be sent. Synchronous: a test's call waits
-- for its reply.
local PlainData = {MESSAGE_LIMIT = 1 << 30}

local function encode(value, out, depth)
  if depth > 1000 then error('nested too deep', 0) end
  local kind = type(value)
  if value == nil then out[#out + 1] = 'n'
  elseif kind == 'boolean' then out[#out + 1] = value and 't' or 'f'
  elseif math.type(value) == 'integer' then out[#out + 1] = string.pack('<c1i8', 'i', value)
  elseif kind == 'number' then out[#out + 1] = string.pack('<c1d', 'd', value)
  elseif kind == 'string' then out[#out + 1] = string.pack('<c1s4', 's', value)
  elseif kind == 'table' then
    local pairs_of = {}
    for key, item in next, value do pairs_of[#pairs_of + 1] = {key, item} end
    out[#out + 1] = string.pack('<c1I4', 'T', #pairs_of)
    for _, pair in ipairs(pairs_of) do
      encode(pair[1], out, depth + 1)
      encode(pair[2], out, depth + 1)
    end
  else error('a ' .. kind .. ' is not plain data', 0) end
end

local function decode(data, at, depth)
  if depth > 1000 then error('nested too deep', 0) end
  local tag = data:sub(at, at)
  if tag == 'n' then return nil, at + 1
  elseif tag == 't' then return true, at + 1
  elseif tag == 'f' then return false, at + 1
  elseif tag == 'i' then return string.unpack('<i8', data, at + 1)
  elseif tag == 'd' then return string.unpack('<d', data, at + 1)
  elseif tag == 's' then return string.unpack('<s4', data, at + 1)
  elseif tag == 'T' then
    local count, table_at = string.unpack('<I4', data, at + 1)
    local result = {}
    for _ = 1, count do
      local key, item
      key, table_at = decode(data, table_at, depth + 1)
      item, table_at = decode(data, table_at, depth + 1)
      if key == nil or key ~= key then error('a table key that is nil or NaN', 0) end
      result[key] = item
    end
    return result, table_at
  end
  error('not a plain-data message', 0)
end

function PlainData.send(file, value)
  local out = {}
  encode(value, out, 0)
  local body = table.concat(out)
  file:write(string.pack('<I8', #body), body)
  file:flush()
end

-- The next message, or nil when the other side closed its end (or sent something cut, too big or malformed).
function PlainData.receive(file)
  local head = file:read(8)
  if head == nil or #head < 8 then return nil end
  local size = string.unpack('<I8', head)
  if size > PlainData.MESSAGE_LIMIT then return nil end
  local body = size == 0 and '' or file:read(size)
  if body == nil or #body < size then return nil end
  local ok, value, ended = pcall(decode, body, 1, 0)
  if not ok or ended ~= #body + 1 then return nil end
  return value
end
