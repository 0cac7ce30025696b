---@mod sightline.config_view  The configuration in effect, as :checkhealth shows it.
---Each option that differs from its default, one line each, with where it was set; values
---that may hold a secret (env, headers, the key command) are never shown.
local M = {}

-- Leaves whose value is never shown: a command that prints the key, and maps of tokens.
local HIDDEN = { api_key_cmd = true, env = true, headers = true }
local MAX = 70 -- a value longer than this is cut: one screen line per option

---A value as one short line, secrets inside it (an agent's env) hidden.
---@param key string the leaf's name
---@param value any
---@return string
local function show(key, value)
  if HIDDEN[key] then
    return '(set; not shown)'
  end
  if type(value) == 'table' then
    value = vim.deepcopy(value)
    for k in pairs(HIDDEN) do
      if type(value[k]) == 'table' then
        value[k] = '(not shown)'
      end
    end
  elseif type(value) == 'string' then
    value = value:gsub('^(%a[%w+.-]*://)[^/@]*@', '%1…@') -- a URL's user:password
  end
  local text = vim.inspect(value, { newline = ' ', indent = '' })
  return #text > MAX and (vim.fn.strcharpart(text, 0, MAX) .. '…') or text
end

---The value at a dotted path of a layer the user wrote, or nil.
---@param layer any
---@param parts string[]
local function dig(layer, parts)
  for _, part in ipairs(parts) do
    if type(layer) ~= 'table' then
      return nil
    end
    layer = layer[part]
  end
  return layer
end

---Walk the schema: every leaf whose value in cfg differs from its default.
---@param out {path: string, key: string, value: any}[]
local function walk(node, cfg, default, path, out)
  local keys = vim.tbl_keys(node)
  table.sort(keys)
  for _, key in ipairs(keys) do
    local sub, here = node[key], path == '' and key or (path .. '.' .. key)
    local value, def = nil, nil
    if type(cfg) == 'table' then
      value = cfg[key]
    end
    if type(default) == 'table' then
      def = default[key]
    end
    if sub.map_of then
      local names = vim.tbl_keys(value or {})
      table.sort(names)
      for _, name in ipairs(names) do
        walk(sub.map_of, value[name], nil, here .. '.' .. name, out)
      end
    elseif sub[1] ~= nil or type(value) ~= 'table' then -- a leaf, or `mappings = false`
      if not vim.deep_equal(value, def) then
        out[#out + 1] = { path = here, key = key, value = value }
      end
    else
      walk(sub, value, def, here, out)
    end
  end
end

---The lines of the configuration in effect: `pane.width = 60  (setup())`.
---@param cfg sightline.Config the effective configuration
---@param opts table? the options of the last setup() that took effect
---@return string[]
function M.lines(cfg, opts)
  local config = require('sightline.config')
  local out = {}
  walk(config.schema, cfg, config.defaults, '', out)
  local lines = {}
  for _, o in ipairs(out) do
    local parts = vim.split(o.path, '.', { plain = true })
    local from = dig(opts, parts) ~= nil and 'setup()' or (dig(vim.g.sightline, parts) ~= nil and 'vim.g.sightline')
    lines[#lines + 1] = ('%s = %s%s'):format(o.path, show(o.key, o.value), from and ('  (' .. from .. ')') or '')
  end
  return lines
end

return M
