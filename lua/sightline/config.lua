---@mod sightline.config  One schema: defaults, merge, validation with paths in messages.
local M = {}

---@class sightline.Config
local defaults = {
  python = nil, ---@type string?
  provider = {
    name = nil, ---@type "anthropic"|"echo"|nil
    model = 'claude-sonnet-5-5',
    max_tokens = 8192,
    base_url = nil, ---@type string?
    api_key_cmd = nil, ---@type string|string[]|nil
    timeout_ms = 60000,
    retries = 2,
  },
  pane = {
    side = 'right',
    width = 0.4,
    keys = { send = '<CR>', submit = '<C-s>', close = 'q', stop = '<C-c>', accept = 'ga', reject = 'gr', compare = 'gd' },
  },
  mappings = vim.deepcopy(require('sightline.keymaps').DEFAULTS),
  selection_menu = true,
  autoaccept = false,
  reveal = { duration_ms = 3000, open = 'peek' },
  attachments = { navigate = 'reveal' },
  mentions = { max_file_bytes = 65536, max_total_bytes = 262144 },
  tools = { max_iterations = 25, command_timeout_ms = 120000 },
  mcp = { servers = {}, start_timeout_ms = 30000, call_timeout_ms = 120000 },
}

local function one_of(values)
  return function(v)
    return vim.tbl_contains(values, v), 'one of ' .. table.concat(values, ', ')
  end
end

local function positive(v)
  return type(v) == 'number' and v > 0, 'positive number'
end

local function key_or_false(v)
  return v == false or type(v) == 'string', 'string or false'
end

local function strings(v)
  return type(v) == 'table' and vim.iter(pairs(v)):all(function(k, x)
    return type(k) == 'number' and type(x) == 'string'
  end), 'list of strings'
end

local function string_map(v)
  return type(v) == 'table' and vim.iter(pairs(v)):all(function(k, x)
    return type(k) == 'string' and type(x) == 'string'
  end), 'table of names to strings'
end

local function tool_kinds(v)
  return type(v) == 'table' and vim.iter(pairs(v)):all(function(k, x)
    return type(k) == 'string' and (x == 'read' or x == 'exec')
  end), "table of tool names to 'read' or 'exec'"
end

-- One MCP server of `mcp.servers` (a map of names the user chooses): stdio or HTTP.
local mcp_server = {
  command = { 'string', true },
  args = { strings, true },
  env = { string_map, true, 'secret' }, -- values may be tokens: never shown in a message
  url = { 'string', true },
  headers = { string_map, true, 'secret' },
  type = { one_of({ 'stdio', 'http', 'streamable-http' }), true },
  kind = { one_of({ 'read', 'exec' }), true },
  tools = { tool_kinds, true },
  trust_annotations = { 'boolean', true },
  enabled = { 'boolean', true },
}

-- Each leaf: { validator, optional }. validator is a type name or a function (vim.validate).
local schema = {
  python = { 'string', true },
  provider = {
    name = { one_of({ 'anthropic', 'echo' }), true },
    model = { 'string' },
    max_tokens = { positive },
    base_url = { 'string', true },
    api_key_cmd = { { 'string', 'table' }, true },
    timeout_ms = { positive },
    retries = { function(v) return type(v) == 'number' and v >= 0 and v <= 10, 'number in 0..10' end },
  },
  pane = {
    side = { one_of({ 'right', 'left' }) },
    width = { positive },
    keys = {
      send = { key_or_false }, submit = { key_or_false }, close = { key_or_false }, stop = { key_or_false },
      accept = { key_or_false }, reject = { key_or_false }, compare = { key_or_false },
    },
  },
  mappings = { chat = { key_or_false }, change = { key_or_false } },
  selection_menu = { 'boolean' },
  autoaccept = { 'boolean' },
  reveal = {
    duration_ms = { function(v) return type(v) == 'number' and v >= 100 and v <= 60000, 'number in 100..60000' end },
    open = { one_of({ 'peek', 'window' }) },
  },
  attachments = { navigate = { one_of({ 'reveal', 'select' }) } },
  mentions = { max_file_bytes = { positive }, max_total_bytes = { positive } },
  tools = { max_iterations = { positive }, command_timeout_ms = { positive } },
  mcp = { servers = { map_of = mcp_server }, start_timeout_ms = { positive }, call_timeout_ms = { positive } },
}

---One value against a type name (vim.validate) or a predicate returning (ok, expected).
---@return string? err
function M.check_leaf(name, value, validator, optional, secret)
  if type(validator) == 'function' then
    if value == nil and optional then
      return nil
    end
    local ok, expected = validator(value)
    if ok then
      return nil
    end
    local got = secret and ('a ' .. type(value)) or vim.inspect(value)
    return ('%s: expected %s, got %s'):format(name, expected, got)
  end
  local ok, err = pcall(vim.validate, name, value, validator, optional)
  if not ok then
    return (tostring(err):gsub('^.-:%d+: ', ''))
  end
end

---A table of names the user chooses, each entry checked against `entry` (mcp.servers).
---@return string? err
function M.check_map(name, value, entry, unknown, validate)
  if type(value) ~= 'table' then
    return ('%s: expected table, got %s'):format(name, type(value))
  end
  for key, item in pairs(value) do
    local path = name .. '.' .. tostring(key)
    if type(key) ~= 'string' then
      return ('%s: expected a table of named entries, got a list'):format(name)
    elseif type(item) ~= 'table' then
      return ('%s: expected table, got %s'):format(path, type(item))
    end
    local err = validate(item, entry, path, unknown)
    if err then
      return err
    end
    if (item.command == nil) == (item.url == nil) then
      return ('%s: expected either command (stdio) or url (HTTP)'):format(path)
    end
  end
end

local function is_leaf(node)
  return node[1] ~= nil
end

---Validate `cfg` against the schema; returns the first error and every unknown key path.
---@return string? err, string[] unknown
local function validate(cfg, node, path, unknown)
  for key, value in pairs(cfg) do
    local sub = node[key]
    local name = path .. '.' .. tostring(key)
    if sub == nil then
      table.insert(unknown, name)
    elseif sub.map_of then
      local err = M.check_map(name, value, sub.map_of, unknown, validate)
      if err then
        return err, unknown
      end
    elseif is_leaf(sub) then
      local err = M.check_leaf(name, value, sub[1], sub[2], sub[3])
      if err then
        return err, unknown
      end
    elseif type(value) ~= 'table' and not (key == 'mappings' and value == false) then
      return ('%s: expected table, got %s'):format(name, type(value)), unknown
    elseif type(value) == 'table' then
      local err = validate(value, sub, name, unknown)
      if err then
        return err, unknown
      end
    end
  end
  return nil, unknown
end

local current ---@type table?
local last_opts ---@type table?

---Merge defaults ⊕ vim.g.sightline ⊕ opts and validate.
---@return table? cfg, string? err, string[] unknown
function M.build(opts)
  local g = vim.g.sightline
  local layers = { vim.deepcopy(defaults), {} }
  -- Not ipairs: with vim.g.sightline unset the list starts with a hole and ipairs would stop
  -- before opts, ignoring the README's setup() for every user.
  for _, layer in ipairs({ g or false, opts or false }) do
    if layer and type(layer) ~= 'table' then
      return nil, ('sightline: expected a table of options, got %s'):format(type(layer)), {}
    end
    if layer then
      local err, unknown = validate(layer, schema, 'sightline', {})
      if err then
        return nil, err, unknown
      end
      table.insert(layers, layer)
    end
  end
  local cfg = vim.tbl_deep_extend('force', unpack(layers))
  if type(g) == 'table' and g.mappings == false or type(opts) == 'table' and opts.mappings == false then
    cfg.mappings = false
  end
  local _, unknown = validate(vim.tbl_extend('force', g or {}, opts or {}), schema, 'sightline', {})
  return cfg, nil, unknown
end

---Every setup() starts again from the defaults.
---@return boolean ok, string? err, string[] unknown
function M.setup(opts)
  local cfg, err, unknown = M.build(opts)
  if not cfg then
    return false, err, unknown
  end
  current = cfg
  last_opts = opts
  return true, nil, unknown
end

---The options of the last setup() that took effect (for :checkhealth), or nil.
function M.last_opts()
  return last_opts
end

---The effective configuration (setup() if it ran, else defaults ⊕ vim.g.sightline).
function M.get()
  if current then
    return current
  end
  local cfg = M.build(nil)
  return cfg or vim.deepcopy(defaults)
end

---The provider a user gets: the configured one, else anthropic when a key is available.
function M.provider_name(cfg)
  cfg = cfg or M.get()
  if cfg.provider.name then
    return cfg.provider.name
  end
  local key = vim.env.ANTHROPIC_API_KEY
  if (key and key ~= '') or cfg.provider.api_key_cmd then
    return 'anthropic'
  end
  return 'echo'
end

M.defaults = defaults
return M
