---@mod sightline.config  One schema: defaults, merge, validation with paths in messages.
local M = {}

-- Facts other modules check against (reveal's arguments, syntax_scope steps) and the core's
-- tool schema mirrors (tests/nvim/test_port_config.py compares python/sightline/tools/view.py).
M.REVEAL_DURATION_MS = { min = 100, max = 60000, default = 3000 }
M.SYNTAX_SCOPE_KINDS = { 'for', 'while', 'if', 'switch', 'try', 'block', 'function' }

-- The providers the core has (python/sightline/providers/__init__.py REGISTRY), each with what
-- provider.thinking means to it (its capabilities.thinking): a token budget or an effort name.
-- tests/nvim/test_port_config.py holds the two equal. A new provider adds one line here.
M.PROVIDERS = {
  anthropic = { thinking = 'budget' },
  openai = { thinking = 'effort' },
  ollama = { thinking = 'effort' },
  openrouter = { thinking = 'effort' },
  gemini = { thinking = 'budget' }, -- a budget (2.x), or an effort: a level for Gemini 3
  copilot = { thinking = 'effort' },
  acp = {},
  echo = {},
  -- OpenAI-compatible presets (python/sightline/domain/presets.py).
  mistral = { thinking = 'effort' },
  deepseek = { thinking = 'effort' },
  xai = { thinking = 'effort' },
  lmstudio = { thinking = 'effort' },
  vllm = { thinking = 'effort' },
  llamacpp = { thinking = 'effort' },
  azure = { thinking = 'effort' },
  bedrock = { thinking = 'budget' },
  vertex = { thinking = 'budget' },
}
local PROVIDER_NAMES = vim.tbl_keys(M.PROVIDERS)
table.sort(PROVIDER_NAMES)

---@class sightline.Config
local defaults = {
  python = nil, ---@type string?
  provider = {
    name = nil, ---@type "anthropic"|"openai"|"ollama"|"openrouter"|"acp"|"echo"|"mistral"|"deepseek"|"xai"|"lmstudio"|"vllm"|"llamacpp"|"azure"|"bedrock"|"vertex"|"gemini"|"copilot"|nil
    model = nil, ---@type string? nil = the provider's default model (the core knows them)
    max_tokens = 8192,
    base_url = nil, ---@type string?
    api_key_cmd = nil, ---@type string|string[]|nil
    timeout_ms = 60000,
    retries = 2,
    prices = nil, ---@type table<string, {input?: number, output?: number, cache_read?: number, cache_write?: number}>?
    agent = nil, ---@type "gemini"|"claude"|"codex"|{cmd: string[], env: table<string,string>?, client_writes: boolean?}|nil
    thinking = nil, ---@type integer|"low"|"medium"|"high"|false|nil token budget (anthropic) or reasoning effort
    context_window = nil, ---@type integer? nil = the model's known context size
    agent_mode = nil, ---@type string? acp: the agent's mode by id (the only way to one that never asks)
    host = nil, ---@type string? copilot: the GitHub Enterprise host (nil = github.com)
    deployment = nil, ---@type string? azure: the deployment (it names the model)
    api_version = nil, ---@type string? azure: the data-plane API version (nil = $OPENAI_API_VERSION or 2024-10-21)
    entra_token_cmd = nil, ---@type string|string[]|nil azure: prints a Microsoft Entra ID token instead of a key
    region = nil, ---@type string? bedrock, vertex: the cloud region (nil = the SDK's: $AWS_REGION, $CLOUD_ML_REGION)
    project = nil, ---@type string? vertex: the Google Cloud project (nil = the credentials' or $ANTHROPIC_VERTEX_PROJECT_ID)
  },
  rules = true,
  pane = {
    side = 'right',
    width = 0.4,
    keys = {
      send = '<CR>',
      submit = '<C-s>',
      close = 'q',
      stop = '<C-c>',
      accept = 'ga',
      reject = 'gr',
      accept_conversation = 'gc',
      accept_always = 'gA',
      reject_conversation = 'gC',
      reject_always = 'gR',
      compare = 'gd',
      block_next = ']b',
      block_prev = '[b',
      block_yank = 'gy',
      line_yank = 'gY',
      paste = '<M-v>', -- the clipboard's image into the composer (<Plug>(sightline-paste))
      edit = 'e',
      regenerate = 'r',
      unqueue = 'dq',
      queue_edit = 'cq',
      steer = '<M-CR>',
      help = 'g?', -- the pane's keys under the transcript (<Plug>(sightline-help))
    },
  },
  mappings = vim.deepcopy(require('sightline.keymaps').DEFAULTS),
  selection_menu = true,
  autoaccept = false,
  reveal = { duration_ms = M.REVEAL_DURATION_MS.default, open = 'peek' },
  attachments = { navigate = 'reveal' },
  mentions = { max_file_bytes = 65536, max_total_bytes = 262144 },
  tools = {
    max_iterations = 25,
    command_timeout_ms = 120000,
    sandbox = 'auto', ---@type "auto"|"off"|{ network: boolean?, home: string[]?, writable: string[]?, required: boolean? }
    -- fetch_url and web_search (`:help sightline-web`)
    network = {
      allow_hosts = {}, ---@type string[] fetched without asking; the only way to private addresses
      timeout_ms = 15000,
      max_bytes = 2097152, -- body bytes read at most; more is cut (and said so)
      search = nil, ---@type {backend: "searxng"|"brave"|"tavily", url: string?, api_key_cmd: string|string[]|nil}?
    },
  },
  completion = { engine = 'auto' }, ---@type { engine: "auto"|"blink"|"cmp"|"native" }
  mcp = { servers = {}, start_timeout_ms = 30000, call_timeout_ms = 120000 },
  checkpoints = { max_mb = 256 },
}

-- How a bad value is named in a message: short, and never a huge string or a table's address.
local function describe(v)
  if v == vim.NIL then
    return 'vim.NIL'
  end
  local t = type(v)
  if t == 'string' then
    return #v > 40 and vim.inspect(v:sub(1, 40)) .. '…' or vim.inspect(v)
  elseif t == 'number' or t == 'boolean' then
    return tostring(v)
  end
  return t
end
M.describe = describe

local function one_of(values)
  return function(v)
    return vim.tbl_contains(values, v), 'one of ' .. table.concat(values, ', ')
  end
end

local function finite(v)
  return type(v) == 'number' and v == v and v > -math.huge and v < math.huge
end

-- Counts and sizes go to the core as integers: no fractions, NaN or infinities.
local function count(lo, hi)
  return function(v)
    return finite(v) and v == math.floor(v) and v >= lo and v <= hi, ('whole number in %d..%d'):format(lo, hi)
  end
end

local positive = count(1, 2 ^ 31 - 1)

local function text(v)
  return type(v) == 'string' and v ~= '' and not v:find('[%z\n]'), 'non-empty string without NUL or newline'
end

-- Neovim refuses a {lhs} longer than 50 bytes (MAXMAPLEN) when the pane maps it.
local function key_or_false(v)
  return v == false or text(v) and #v <= 50, 'key (string up to 50 bytes) or false'
end

local function width(v)
  return finite(v) and (v > 0 and v < 1 or v >= 1 and v <= 1000 and v == math.floor(v)),
    'fraction of the screen in (0, 1) or a column count 1..1000'
end

local function command(v)
  if text(v) then
    return true
  end
  local ok = type(v) == 'table' and #v > 0 and vim.islist(v)
  for _, part in ipairs(ok and v or {}) do
    ok = ok and type(part) == 'string' and not part:find('%z')
  end
  return ok, 'command string or non-empty list of strings'
end

-- provider.agent of the acp provider: a preset, or a command of one's own.
local function agent(v)
  local expected = "'gemini', 'claude', 'codex' or { cmd = {...}, env = {...}, client_writes = bool }"
  if v == 'gemini' or v == 'claude' or v == 'codex' then
    return true
  end
  if type(v) ~= 'table' or vim.islist(v) then
    return false, expected
  end
  for key in pairs(v) do
    if key ~= 'cmd' and key ~= 'env' and key ~= 'client_writes' then
      return false, expected .. ' (unknown key ' .. describe(key) .. ')'
    end
  end
  local ok = type(v.cmd) == 'table' and #v.cmd > 0 and vim.islist(v.cmd)
  for _, part in ipairs(ok and v.cmd or {}) do
    ok = ok and type(part) == 'string' and part ~= '' and not part:find('%z')
  end
  if v.env ~= nil then
    ok = ok and type(v.env) == 'table'
    for name, value in pairs(type(v.env) == 'table' and v.env or {}) do
      ok = ok and type(name) == 'string' and type(value) == 'string'
    end
  end
  ok = ok and (v.client_writes == nil or type(v.client_writes) == 'boolean')
  return ok, expected
end

local function strings(v)
  return type(v) == 'table' and vim.iter(pairs(v)):all(function(k, x)
    return type(k) == 'number' and type(x) == 'string'
  end),
    'list of strings'
end

local function string_map(v)
  return type(v) == 'table' and vim.iter(pairs(v)):all(function(k, x)
    return type(k) == 'string' and type(x) == 'string'
  end),
    'table of names to strings'
end

local function tool_kinds(v)
  return type(v) == 'table' and vim.iter(pairs(v)):all(function(k, x)
    return type(k) == 'string' and (x == 'read' or x == 'exec')
  end),
    "table of tool names to 'read' or 'exec'"
end

-- One MCP server of `mcp.servers` (a map of names the user chooses): stdio or HTTP.
local function url(v)
  return text(v) and v:find('^https?://') ~= nil, 'http:// or https:// URL'
end

-- tools.network.allow_hosts: host names or addresses, `*.example.org` for its subdomains.
local function hosts(v)
  local ok = type(v) == 'table' and (next(v) == nil or vim.islist(v))
  for _, h in ipairs(ok and v or {}) do
    ok = ok and type(h) == 'string' and h:find('^[%w%.%-%*:%[%]_]+$') ~= nil and not h:find('/')
  end
  return ok, "list of host names ('docs.python.org', '*.python.org', '127.0.0.1')"
end

-- tools.network.search: which search service web_search asks (`:help sightline-web-search`).
local SEARCH_BACKENDS = { 'searxng', 'brave', 'tavily' }
local function search_backend(v)
  local expected = "{ backend = 'searxng', url = 'https://…' } or { backend = 'brave' | 'tavily', api_key_cmd = … }"
  if type(v) ~= 'table' or vim.islist(v) or not vim.tbl_contains(SEARCH_BACKENDS, v.backend) then
    return false, expected
  end
  for key in pairs(v) do
    if key ~= 'backend' and key ~= 'url' and key ~= 'api_key_cmd' then
      return false, expected .. ' (unknown key ' .. describe(key) .. ')'
    end
  end
  if v.url ~= nil and not url(v.url) then
    return false, expected .. ' (url: an http:// or https:// URL)'
  end
  if v.backend == 'searxng' and v.url == nil then
    return false, expected .. ' (searxng needs the url of your instance)'
  end
  if v.api_key_cmd ~= nil and not command(v.api_key_cmd) then
    return false, expected .. ' (api_key_cmd: a command string or list of strings)'
  end
  return true
end

-- tools.sandbox (:help sightline-sandbox): 'auto', 'off', or a table of rules (auto with them).
local SANDBOX_KEYS = { network = 'boolean', required = 'boolean', home = 'paths', writable = 'paths' }
local function sandbox(v)
  local expected = "'auto', 'off' or { network = bool, home = { paths }, writable = { paths }, required = bool }"
  if v == 'auto' or v == 'off' then
    return true
  end
  if type(v) ~= 'table' or (next(v) ~= nil and vim.islist(v)) then
    return false, expected
  end
  for key, value in pairs(v) do
    local want = SANDBOX_KEYS[key]
    if want == nil then
      return false, expected .. ' (unknown key ' .. describe(key) .. ')'
    elseif want == 'boolean' and type(value) ~= 'boolean' then
      return false, expected .. ' (' .. key .. ': true or false)'
    elseif want == 'paths' then
      local ok = type(value) == 'table' and (next(value) == nil or vim.islist(value))
      for _, path in ipairs(ok and value or {}) do
        local good = (text(path)) and (path:sub(1, 1) == '/' or vim.startswith(path, '~/'))
        ok = ok and good
      end
      if not ok then
        return false, expected .. ' (' .. key .. ': a list of absolute or ~/ paths)'
      end
    end
  end
  return true
end

local mcp_server = {
  command = { text, true },
  args = { strings, true },
  env = { string_map, true, 'secret' }, -- values may be tokens: never shown in a message
  url = { url, true },
  headers = { string_map, true, 'secret' },
  type = { one_of({ 'stdio', 'http', 'streamable-http' }), true },
  kind = { one_of({ 'read', 'exec' }), true },
  tools = { tool_kinds, true },
  trust_annotations = { 'boolean', true },
  enabled = { 'boolean', true },
  sandbox = { 'boolean', true }, -- a stdio server run in the sandbox (tools.sandbox's rules)
}

-- Each leaf: { validator, optional, secret? }. validator is a type name or a predicate
-- returning (ok, expected); a secret leaf's value is never quoted in a message. A
-- `{ map_of = entry }` node is a table of names the user chooses, each checked as `entry`.
local schema = {
  python = { text, true },
  provider = {
    name = { one_of(PROVIDER_NAMES), true },
    model = { text, true },
    max_tokens = { positive },
    base_url = { text, true },
    api_key_cmd = { command, true },
    timeout_ms = { positive },
    retries = { count(0, 10) },
    prices = {
      function(v)
        local ok = type(v) == 'table'
        for model, p in pairs(ok and v or {}) do
          ok = ok and type(model) == 'string' and type(p) == 'table'
          for k, n in pairs(type(p) == 'table' and p or {}) do
            ok = ok and vim.tbl_contains({ 'input', 'output', 'cache_read', 'cache_write' }, k) and finite(n) and n >= 0
          end
        end
        return ok, 'a table { [model] = { input = n, output = n, cache_read = n, cache_write = n } }'
      end,
      true,
    },
    agent = { agent, true },
    thinking = {
      function(v)
        if v == false or v == 'low' or v == 'medium' or v == 'high' then
          return true
        end
        return count(1024, 128000)(v) == true, "token budget 1024..128000, 'low', 'medium', 'high' or false"
      end,
      true,
    },
    context_window = { count(1024, 2 ^ 31 - 1), true },
    agent_mode = { 'string', true },
    host = { text, true },
    deployment = { text, true },
    api_version = { text, true },
    entra_token_cmd = { command, true },
    region = { text, true },
    project = { text, true },
  },
  rules = { 'boolean' },
  pane = {
    side = { one_of({ 'right', 'left' }) },
    width = { width },
    keys = {
      send = { key_or_false },
      submit = { key_or_false },
      close = { key_or_false },
      stop = { key_or_false },
      accept = { key_or_false },
      reject = { key_or_false },
      accept_conversation = { key_or_false },
      accept_always = { key_or_false },
      reject_conversation = { key_or_false },
      reject_always = { key_or_false },
      compare = { key_or_false },
      block_next = { key_or_false },
      block_prev = { key_or_false },
      block_yank = { key_or_false },
      line_yank = { key_or_false },
      paste = { key_or_false },
      edit = { key_or_false },
      regenerate = { key_or_false },
      unqueue = { key_or_false },
      queue_edit = { key_or_false },
      steer = { key_or_false },
      help = { key_or_false },
    },
  },
  mappings = { chat = { key_or_false }, change = { key_or_false } },
  selection_menu = { 'boolean' },
  autoaccept = { 'boolean' },
  reveal = {
    duration_ms = { count(M.REVEAL_DURATION_MS.min, M.REVEAL_DURATION_MS.max) },
    open = { one_of({ 'peek', 'window' }) },
  },
  attachments = { navigate = { one_of({ 'reveal', 'select' }) } },
  mentions = { max_file_bytes = { positive }, max_total_bytes = { positive } },
  tools = {
    max_iterations = { positive },
    command_timeout_ms = { positive },
    sandbox = { sandbox },
    network = {
      allow_hosts = { hosts },
      timeout_ms = { positive },
      max_bytes = { count(1024, 2 ^ 30) },
      search = { search_backend, true, 'secret' },
    },
  },
  completion = { engine = { one_of({ 'auto', 'blink', 'cmp', 'native' }) } },
  mcp = { servers = { map_of = mcp_server }, start_timeout_ms = { positive }, call_timeout_ms = { positive } },
  checkpoints = { max_mb = { positive } },
}

---@alias sightline.Validator string|fun(v: any): boolean, string a type name, or (ok, expected)

---One value against a type name or a predicate returning (ok, expected).
---@param name string the option's path, for the message
---@param value any
---@param validator sightline.Validator
---@param optional boolean? nil is allowed
---@param secret boolean? never show the value in the message
---@return string? err
function M.check_leaf(name, value, validator, optional, secret)
  if value == nil and optional then
    return nil
  end
  local ok, expected
  if type(validator) == 'function' then
    ok, expected = validator(value)
  else
    ok, expected = type(value) == validator, validator
  end
  if ok then
    return nil
  end
  local got = secret and ('a ' .. type(value)) or describe(value)
  return ('%s: expected %s, got %s'):format(name, expected, got)
end

---A table of names the user chooses, each entry checked against `entry` (mcp.servers).
---@param name string the option's path, for the message
---@param value any
---@param entry table the schema of one entry
---@param unknown fun(path: string) called for a key the schema does not know
---@param validate fun(path: string, value: any, schema: table): string? checks one entry
---@return string? err
function M.check_map(name, value, entry, unknown, validate)
  if type(value) ~= 'table' then
    return ('%s: expected table, got %s'):format(name, type(value))
  end
  for key, item in pairs(value) do
    local path = name .. '.' .. tostring(key)
    if type(key) ~= 'string' then
      return ('%s: expected a table of named entries, got a list'):format(name)
    elseif key == '' or key:find('%c') or vim.fn.strchars(key) > 64 then
      return ('%s: expected names of 1 to 64 characters without control characters, got %s'):format(name, describe(key))
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

---Validate one layer against the schema; returns the first error and every unknown key path.
---Only the schema is walked, so a cyclic or deeply nested value can't make it loop.
---@return string? err, string[] unknown
local function validate(cfg, node, path, unknown)
  for key, value in pairs(cfg) do
    local sub = type(key) == 'string' and node[key] or nil
    local name = path .. '.' .. (type(key) == 'string' and key or '[' .. describe(key) .. ']')
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
    elseif type(value) ~= 'table' then
      -- mappings = false turns every default key off
      if not (key == 'mappings' and value == false) then
        return ('%s: expected table, got %s'):format(name, describe(value)), unknown
      end
    else
      local err = validate(value, sub, name, unknown)
      if err then
        return err, unknown
      end
    end
  end
  return nil, unknown
end

---defaults ⊕ layers, walking the schema: unknown keys never reach the core, values are copies.
local function merge(node, default, layers)
  local out = {}
  for key, sub in pairs(node) do
    local below = {}
    for _, layer in ipairs(layers) do
      local v = layer[key]
      if v ~= nil then
        below[#below + 1] = v
      end
    end
    if sub.map_of then
      -- A map of names (mcp.servers): every layer's entries, a later layer's by name winning.
      local map = vim.deepcopy(default[key] or {})
      for _, v in ipairs(below) do
        for name, entry in pairs(v) do
          map[name] = vim.deepcopy(entry)
        end
      end
      out[key] = map
    elseif is_leaf(sub) then
      local v = below[#below]
      if v == nil then
        v = default[key]
      end
      out[key] = vim.deepcopy(v)
    else
      -- The last layer that says false wins (mappings = false); later tables start from defaults.
      local tables = {}
      for _, v in ipairs(below) do
        if v == false then
          tables = false
        elseif tables then
          tables[#tables + 1] = v
        else
          tables = { v }
        end
      end
      out[key] = tables and merge(sub, default[key], tables) or false
    end
  end
  return out
end

---The rules across keys, on the merged config (each key alone was checked by `validate`).
---@param cfg sightline.Config
---@param opts table? the setup() layer (a value it set is named `sightline.…`)
---@return string? err
local function across_keys(cfg, opts)
  local name, thinking = cfg.provider.name, cfg.provider.thinking
  if type(thinking) == 'number' and name and M.PROVIDERS[name].thinking == 'effort' then
    local mine = type(opts) == 'table' and type(opts.provider) == 'table' and opts.provider.thinking ~= nil
    local expected = "'low', 'medium' or 'high' for the " .. name .. ' provider (a token budget is for anthropic)'
    return ('%s.provider.thinking: expected %s, got %s'):format(
      mine and 'sightline' or 'vim.g.sightline',
      expected,
      describe(thinking)
    )
  end
end

local current ---@type table?
local last_opts ---@type table?
local last_error ---@type string?

---Merge defaults ⊕ vim.g.sightline ⊕ opts and validate.
---@param opts table? the user's (partial) configuration
---@return sightline.Config? cfg, string? err, string[] unknown
function M.build(opts)
  local g = vim.g.sightline
  local layers, unknown = {}, {}
  for _, layer in ipairs({ { g, 'vim.g.sightline' }, { opts, 'sightline' } }) do
    local value, path = layer[1], layer[2]
    if value ~= nil then
      if type(value) ~= 'table' then
        return nil, ('%s: expected a table of options, got %s'):format(path, describe(value)), unknown
      end
      local err = validate(value, schema, path, unknown)
      if err then
        return nil, err, unknown
      end
      layers[#layers + 1] = value
    end
  end
  local cfg = merge(schema, defaults, layers)
  local err = across_keys(cfg, opts)
  if err then
    return nil, err, unknown
  end
  return cfg, nil, unknown
end

---Every setup() starts again from the defaults.
---@param opts table?
---@return boolean ok, string? err, string[] unknown
function M.setup(opts)
  local cfg, err, unknown = M.build(opts)
  if not cfg then
    last_error = err
    return false, err, unknown
  end
  current, last_opts, last_error = cfg, opts, nil
  return true, nil, unknown
end

---The options of the last setup() that took effect (for :checkhealth), or nil; and the
---error of a later setup() that was refused.
---@return table? opts, string? refused
function M.last_opts()
  return last_opts, last_error
end

local warned ---@type string?

---The effective configuration (setup() if it ran, else defaults ⊕ vim.g.sightline).
---@return sightline.Config
function M.get()
  if current then
    return current
  end
  local cfg, err = M.build(nil)
  if not cfg then
    -- vim.g.sightline alone (no setup()) is checked here, on first use: say so once.
    if warned ~= err then
      warned = err
      require('sightline.ui.message').notify(err .. ' (using the defaults)', vim.log.levels.ERROR)
    end
    return merge(schema, defaults, {})
  end
  return cfg
end

---The provider a user gets: the configured one, else anthropic when a key is available.
---@param cfg sightline.Config? default: the effective configuration
---@return 'anthropic'|'echo'
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
M.schema = schema

-- setup({}) at start-up does not load this module (≤ 1 ms budget): it left a mark for us.
local sl = package.loaded['sightline']
if type(sl) == 'table' and sl._empty_setup then
  sl._empty_setup = nil
  current, last_opts = merge(schema, defaults, {}), {}
end

return M
