--- Checking reveal's and go_to_position's arguments, and the error texts the agent reads.
--- Arguments come from JSON (numbers may be floats), msgpack (nil is vim.NIL) and the Ex
--- command (numbers are strings).
local api = vim.api

local M = {}

-- The bounds live in the config schema (config.lua), like the setting's own check.
local DURATION = require('sightline.config').REVEAL_DURATION_MS
local DEFAULT_DURATION, MIN_DURATION, MAX_DURATION = DURATION.default, DURATION.min, DURATION.max

--- The user's `reveal` settings.
---@return table
function M.config()
  local ok, mod = pcall(require, 'sightline.config')
  if ok and type(mod) == 'table' and type(mod.get) == 'function' then
    local ok2, cfg = pcall(mod.get)
    if ok2 and type(cfg) == 'table' and type(cfg.reveal) == 'table' then
      return cfg.reveal
    end
  end
  -- Without the config module (the module required alone), g:sightline is the user's config.
  local g = vim.g.sightline
  return type(g) == 'table' and type(g.reveal) == 'table' and g.reveal or {}
end

--- msgpack nil arrives as vim.NIL; treat it as absent.
---@param t table
---@return table
function M.strip_nil(t)
  local out = {}
  for k, v in pairs(t) do
    if v ~= vim.NIL then
      out[k] = v
    end
  end
  return out
end

--- A whole number (numbers from JSON may be floats like 3.0; the Ex command passes strings).
---@return integer?, string?
local function int_arg(v, name)
  if v == nil then
    return nil
  end
  if type(v) == 'string' and v:match('^%s*[-+]?%d+%s*$') then
    v = tonumber(v)
  end
  if type(v) ~= 'number' or v ~= math.floor(v) or v ~= v or math.abs(v) == math.huge then
    return nil, ('%s must be a whole number, got %s'):format(name, vim.inspect(v))
  end
  return math.floor(v)
end

--- The file (or, for Lua callers, the buffer) both entry points take.
---@return table?, string?
local function check_file(opts)
  local o = { file_path = opts.file_path, buffer = opts.buffer }
  if o.file_path ~= nil and (type(o.file_path) ~= 'string' or o.file_path == '') then
    return nil, 'file_path must be a non-empty string'
  end
  if o.file_path == nil and type(o.buffer) ~= 'number' then
    return nil, 'file_path is required'
  end
  return o
end

--- Check reveal's arguments that do not need the file. Returns normalised opts or an error.
---@param opts sightline.RevealOpts
---@return table?, string?
function M.check_reveal(opts)
  local o, err = check_file(opts)
  if not o then
    return nil, err
  end
  o.member_key = opts.member_key
  for _, k in ipairs({ 'start_line', 'end_line', 'duration_ms' }) do
    o[k], err = int_arg(opts[k], k)
    if err then
      return nil, err
    end
  end
  if o.member_key ~= nil and (type(o.member_key) ~= 'string' or vim.trim(o.member_key) == '') then
    return nil, 'member_key must be a non-empty string'
  end
  o.syntax_scope, err = require('sightline.resolve').check_syntax_scope(opts.syntax_scope)
  if err then
    return nil, err
  end
  local resolving = o.member_key ~= nil or o.syntax_scope ~= nil
  if o.start_line == nil and (o.end_line ~= nil or not resolving) then
    return nil, 'start_line is required (or give member_key)'
  end
  if o.start_line and o.start_line < 1 then
    return nil, ('start_line must be at least 1, got %d'):format(o.start_line)
  end
  o.end_line = o.end_line or o.start_line
  if o.end_line and o.end_line < o.start_line then
    return nil, ('end_line %d is before start_line %d'):format(o.end_line, o.start_line)
  end
  o.duration_ms = o.duration_ms or int_arg(M.config().duration_ms, 'duration_ms') or DEFAULT_DURATION
  if o.duration_ms < MIN_DURATION or o.duration_ms > MAX_DURATION then
    return nil, ('duration_ms must be between %d and %d, got %d'):format(MIN_DURATION, MAX_DURATION, o.duration_ms)
  end
  return o
end

--- Check go_to_position's arguments that do not need the file.
---@param opts sightline.GotoOpts
---@return table?, string?
function M.check_goto(opts)
  local o, err = check_file(opts)
  if not o then
    return nil, err
  end
  for _, k in ipairs({ 'line', 'column', 'end_line', 'end_column' }) do
    o[k], err = int_arg(opts[k], k)
    if err then
      return nil, err
    elseif o[k] and o[k] < 1 then
      return nil, ('%s must be at least 1, got %d'):format(k, o[k])
    end
  end
  if not o.line then
    return nil, 'line is required'
  end
  if o.end_column and not o.end_line then
    o.end_line = o.line
  end
  if o.end_line and o.end_line < o.line then
    return nil, ('end_line %d is before line %d'):format(o.end_line, o.line)
  end
  if o.end_line == o.line and o.end_column and o.end_column < (o.column or 1) then
    return nil, ('end_column %d is before column %d'):format(o.end_column, o.column or 1)
  end
  return o
end

--- The first of the named line numbers past the end of t's buffer, as an error text.
---@param t sightline.Target
---@param lines {[1]: string, [2]: integer?}[] name and value
---@return string?
function M.check_lines(t, lines)
  local n = api.nvim_buf_line_count(t.buf)
  for _, l in ipairs(lines) do
    if l[2] and l[2] > n then
      return ('%s %d is past the end of %s (%d lines)'):format(l[1], l[2], t.name, n)
    end
  end
end

--- Check go_to_position's lines and columns against t's buffer.
---@param o table checked by check_goto
---@param t sightline.Target
---@return string?
function M.check_position(o, t)
  local err = M.check_lines(t, { { 'line', o.line }, { 'end_line', o.end_line } })
  if err then
    return err
  end
  for _, p in ipairs({ { 'column', 'line' }, { 'end_column', 'end_line' } }) do
    local col, row = o[p[1]], o[p[2]]
    if col and row then
      local text = api.nvim_buf_get_lines(t.buf, row - 1, row, true)[1]
      local chars = vim.fn.strchars(text)
      if col > math.max(chars, 1) then
        return ('%s %d is past the end of line %d of %s (%d characters)'):format(p[1], col, row, t.name, chars)
      end
    end
  end
end

return M
