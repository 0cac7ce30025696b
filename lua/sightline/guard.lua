---@mod sightline.guard  One rule for every public entry: check the arguments, refuse with a
---message, and let no Lua error reach the user. Loaded on the first API call, not at start-up.
local M = {}

local describe = function(v)
  return require('sightline.config').describe(v)
end

local RANGE_KEYS = { 'buffer', 'start_row', 'start_col', 'end_row', 'end_col' }
local MAX_PATH = 4096

local function integer(v)
  return type(v) == 'number' and v == v and v == math.floor(v) and math.abs(v) < 2 ^ 31
end

---A flat range ({buffer, start_row, start_col, end_row, end_col}, all or none) or nil.
---Bounds are checked where the buffer is (sightline.port.scope); here only the shape.
local function range(v, optional)
  if v == nil and optional then
    return nil
  end
  if type(v) ~= 'table' then
    return 'opts must be a flat range {buffer, start_row, start_col, end_row, end_col}, got ' .. describe(v)
  end
  for key in pairs(v) do
    if not vim.tbl_contains(RANGE_KEYS, key) then
      return ('unknown field %s (a flat range has buffer, start_row, start_col, end_row, end_col)'):format(
        type(key) == 'string' and key or describe(key)
      )
    end
  end
  if next(v) == nil then
    return nil
  end
  for _, key in ipairs(RANGE_KEYS) do
    if not integer(v[key]) then
      return ('%s must be an integer, got %s'):format(key, describe(v[key]))
    end
  end
  if v.buffer < 0 then
    return 'buffer must be 0 (the current buffer) or a buffer number, got ' .. v.buffer
  end
end

---Each parameter kind: a check returning an error text, or nil when the value is fine.
local kinds = {
  -- An empty text is the core's to refuse (one rule, one side).
  text = function(v)
    if type(v) ~= 'string' then
      return 'text must be a string, got ' .. describe(v)
    end
  end,
  reason = function(v)
    if v ~= nil and type(v) ~= 'string' then
      return 'reason must be a string, got ' .. describe(v)
    end
  end,
  decision = function(v)
    if v ~= 'accept' and v ~= 'reject' then
      return "expected 'accept' or 'reject', got " .. describe(v)
    end
  end,
  switch = function(v)
    if not (v == nil or v == true or v == false or v == 'on' or v == 'off' or v == 'toggle') then
      return 'expected on, off or toggle, got ' .. describe(v)
    end
  end,
  range = function(v)
    return range(v, false)
  end,
  ['range?'] = function(v)
    return range(v, true)
  end,
  path = function(v)
    if type(v) ~= 'string' or v == '' then
      return 'path must be a non-empty string, got ' .. describe(v)
    elseif v:find('%z') or #v > MAX_PATH then
      return 'path is not a file name (NUL byte or longer than 4096 bytes)'
    end
  end,
  -- reveal and go_to_position check their own fields (their errors are the seed's texts);
  -- here only what would make those checks slow or unreadable.
  reveal = function(v)
    if type(v) ~= 'table' then
      return nil -- reveal answers "… expects a table of arguments" itself
    end
    for key, field in pairs(v) do
      if type(key) ~= 'string' then
        return ('unknown argument %s'):format(describe(key))
      elseif type(field) == 'string' and (#field > MAX_PATH or field:find('%z')) then
        return ('%s is too long or holds a NUL byte'):format(key)
      end
    end
  end,
}

---Seed-style entries answer an error text instead of nil + message.
local TEXT_ANSWER = { reveal = true, go_to_position = true }

local function first_line(err)
  local line = tostring(err):match('^[^\n]*') or '?'
  return (line:gsub('^.-%.lua:%d+: ', ''):sub(1, 200))
end

---Call fn(...) for the entry `name` whose parameters are `params` (kinds above); `false`
---checks no argument (an entry added without a spec still never throws).
---@param params string[]|false
---@param name string the entry's public name, for the message
---@param fn function
---@param ... any the caller's arguments, checked against `params`
---@return any
function M.call(name, params, fn, ...)
  local n = select('#', ...)
  local args = { ... }
  local err
  if params == false then
    params = {}
  elseif n > #params then
    err = #params == 0 and ('takes no arguments, got %s'):format(describe(args[1]))
      or ('takes at most %d arguments, got %d'):format(#params, n)
  end
  for i, kind in ipairs(params) do
    err = err or kinds[kind](args[i])
  end
  if not err then
    local res = vim.F.pack_len(pcall(fn, ...))
    if res[1] then
      return unpack(res, 2, res.n)
    end
    -- A bug, not the user's input: say so in one line, without a traceback.
    err = 'internal error: ' .. first_line(res[2])
  end
  local msg = ('sightline.%s: %s'):format(name, err)
  if TEXT_ANSWER[name] then
    return msg
  end
  return nil, msg
end

return M
