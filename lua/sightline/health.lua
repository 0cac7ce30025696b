---@mod sightline.health  :checkhealth sightline
local M = {}
local h = vim.health
local HEALTH_TIMEOUT_MS = 15000

---The interpreter's Python and packages (sightline.entry.health, run there) and the key's
---source. Packages needed now are errors when missing; the others warnings.
---@param python string
---@param root string the plugin's directory
---@param provider string the effective provider name
---@param cfg sightline.Config
---@return boolean ok, table? info the report: the key's source, credentials, endpoint
local function check_python(python, root, provider, cfg)
  local pythonpath = root .. '/python' .. (vim.env.PYTHONPATH and (':' .. vim.env.PYTHONPATH) or '')
  local mcp = next(cfg.mcp.servers) ~= nil or vim.uv.fs_stat('.mcp.json') ~= nil
  -- The keys its credential and endpoint checks read (a command's presence, never its text).
  local prov = cfg.provider
  local sent = {
    base_url = prov.base_url,
    model = prov.model,
    deployment = prov.deployment,
    region = prov.region,
    project = prov.project,
    host = prov.host,
    api_key_cmd = prov.api_key_cmd ~= nil or nil,
    entra_token_cmd = prov.entra_token_cmd ~= nil or nil,
  }
  local args = vim.json.encode({ provider = provider, mcp = mcp, config = sent })
  local res = vim
    .system({ python, '-m', 'sightline.entry.health', args }, { text = true, env = { PYTHONPATH = pythonpath } })
    :wait(HEALTH_TIMEOUT_MS)
  if res.code == 124 then
    -- Killed at the timeout (importing the SDKs is slow on a loaded machine): the packages
    -- are not known, so the core's own answer below is what tells whether it runs.
    h.warn(('%s did not finish checking its packages within %d s'):format(python, HEALTH_TIMEOUT_MS / 1000))
    return true, nil
  end
  local ok, info = pcall(vim.json.decode, vim.trim(res.stdout or ''))
  if res.code ~= 0 or not ok or type(info) ~= 'table' then
    h.error(('%s failed to run: %s'):format(python, vim.trim(res.stderr or ''):sub(1, 300)))
    return false
  end
  h.ok(('Python %s (%s)'):format(info.python, python))
  local all = true
  for _, p in ipairs(info.packages) do
    local name = p.dist .. (p.version ~= '' and (' ' .. p.version) or '')
    if p.error == '' then
      h.ok(('%s (%s)'):format(name, p.needed_by))
    else
      local say = p.needed and h.error or h.warn
      all = all and not p.needed
      local advice = require('sightline.diagnose').install_advice(root) .. ', or set the `python` option'
      if type(p.extra) == 'string' then
        advice = ("pip install 'sightline[%s]' into %s, or set the `python` option"):format(p.extra, python)
      end
      say(('%s is not importable there (%s): needed by %s'):format(p.dist, p.error, p.needed_by), { advice })
    end
  end
  return all, info
end

---The configuration in effect: which layers, whether the last setup() took, every option
---that differs from its default, unknown keys.
local function check_config()
  h.start('sightline: configuration in effect')
  local config = require('sightline.config')
  local opts, refused = config.last_opts()
  local cfg, err, unknown = config.build(opts)
  if refused then
    h.error('the last setup() was refused: ' .. refused, {
      'the setup() before it is in effect (shown below); fix the option and call setup() again',
    })
  end
  if err then
    h.error('configuration: ' .. err, { 'the defaults are in effect' })
  else
    local layers = { 'the defaults' }
    if vim.g.sightline ~= nil then
      layers[#layers + 1] = 'vim.g.sightline'
    end
    if opts ~= nil then
      layers[#layers + 1] = refused and 'the setup() before the refused one' or 'setup()'
    end
    h.info('in effect: ' .. table.concat(layers, ' ⊕ '))
  end
  for _, key in ipairs(unknown or {}) do
    h.warn(('unknown option %s (ignored)'):format(key))
  end
  local lines = require('sightline.config_view').lines(cfg or config.get(), opts)
  if #lines == 0 then
    h.info('every option has its default value')
  end
  for _, line in ipairs(lines) do
    h.info(line)
  end
end

---The configured ACP agent: found, version, capabilities, scoped turns (starts it once).
---`provider` is the effective provider table (the core keeps no defaults of its own).
---@param python string the interpreter the core would run
---@param root string the plugin's directory
---@param agent string|table the configured agent (a preset name or {cmd, env})
---@param provider table
function M.check_acp(python, root, agent, provider)
  local env = { PYTHONPATH = root .. '/python' .. (vim.env.PYTHONPATH and (':' .. vim.env.PYTHONPATH) or '') }
  local sent = vim.tbl_extend('force', provider, { name = 'acp', agent = agent })
  local cmd = { python, '-m', 'sightline.providers.acp', vim.json.encode(sent) }
  local res = vim.system(cmd, { text = true, env = env }):wait(30000)
  local ok, info = pcall(vim.json.decode, vim.trim(res.stdout or ''))
  if res.code ~= 0 or not ok or type(info) ~= 'table' then
    h.error('ACP agent: the check failed: ' .. vim.trim(res.stderr or ''):sub(1, 300))
    return
  end
  local name = type(agent) == 'string' and agent or table.concat(info.cmd or {}, ' ')
  if not info.found then
    h.error(('ACP agent %s: not found'):format(name), { info.error })
    return
  end
  if info.error then
    h.error(('ACP agent %s: found, but %s'):format(name, info.error))
    return
  end
  h.ok(('ACP agent %s: %s'):format(name, info.version or 'version unknown'))
  local caps = {}
  for key, on in pairs(info.capabilities or {}) do
    caps[#caps + 1] = key .. (on and ' yes' or ' no')
  end
  table.sort(caps)
  h.info('capabilities: ' .. table.concat(caps, ', '))
  if info.scoped then
    h.ok('Change with Agent: available (its edits come through sightline)')
  else
    h.warn('Change with Agent: not available with this agent (its edits go straight to disk)')
  end
end

---Where the provider's key comes from (never the key).
---@param provider string
---@param cfg sightline.Config
---@param key table? from sightline.entry.health
local function check_key(provider, cfg, key)
  if key and key.signin then
    if #key.signin > 0 then
      h.ok(('signed in to GitHub Copilot on %s: %s'):format(key.host, table.concat(key.signin, ', ')))
    else
      h.error(('not signed in to GitHub Copilot on %s'):format(key.host), {
        'run :Sightline login copilot (or sign in with copilot.vim or its Lua port)',
      })
    end
    return
  end
  if not key or not key.needs_key then
    return
  end
  local value = vim.env[key.env]
  if value and value ~= '' then
    h.ok(('an API key is set in $%s'):format(key.env))
  elseif cfg.provider.api_key_cmd then
    h.ok('the API key comes from provider.api_key_cmd')
  else
    h.error(('no API key for %s: set $%s or provider.api_key_cmd'):format(provider, key.env))
  end
end

---The cloud provider's credentials (where from, never a value) and whether its endpoint
---accepts a connection (sightline.entry.health found both).
---@param provider string
---@param info table? sightline.entry.health's report
local function check_reach(provider, info)
  local creds = info and info.credentials
  if type(creds) == 'table' then
    if creds.error then
      h.error(('%s credentials: %s'):format(provider, creds.error))
    else
      h.ok(('%s credentials from %s'):format(provider, creds.from))
    end
  end
  local ep = info and info.endpoint
  if type(ep) == 'table' then
    if ep.ok then
      h.ok(('endpoint %s accepts connections'):format(ep.url))
    else
      h.error(('endpoint %s is not reachable (%s: %s)'):format(ep.url, ep.address, ep.error or 'failed'), {
        'check provider.base_url / provider.region, the network and any proxy',
      })
    end
  end
end

---:checkhealth sightline, from the effective configuration.
function M.check()
  h.start('sightline')
  if vim.fn.has('nvim-0.11') == 1 then
    h.ok('Neovim ' .. tostring(vim.version()))
  else
    h.error('Neovim 0.11 or newer is required, this is ' .. tostring(vim.version()))
  end
  local config = require('sightline.config')
  local cfg = config.build(config.last_opts()) or config.get()

  local host = require('sightline.host')
  local python = host.python()
  local provider = config.provider_name(cfg)
  local python_ok, info = false, nil
  if vim.fn.executable(python) == 1 then
    python_ok, info = check_python(python, host.root, provider, cfg)
  else
    h.error(('Python interpreter %q not found'):format(python))
  end

  h.info(
    'provider: ' .. provider .. (provider == 'echo' and '' or (' (model ' .. (cfg.provider.model or 'default') .. ')'))
  )
  if provider == 'acp' then
    M.check_acp(python, host.root, cfg.provider.agent or 'gemini', cfg.provider)
  elseif provider == 'echo' then
    h.info('the echo provider repeats what you type (set $ANTHROPIC_API_KEY for Claude)')
  else
    check_key(provider, cfg, info and info.key)
    check_reach(provider, info)
  end

  if python_ok then
    local started = vim.uv.hrtime()
    local res, req_err = host.request('core.ping')
    if res then
      h.ok(('the core answers (pid %d, %.0f ms)'):format(res.pid, (vim.uv.hrtime() - started) / 1e6))
    else
      h.error('the core did not start or answer: ' .. tostring(req_err), host.stderr())
    end
    if res then
      M.check_mcp()
    end
  end
  check_config()
end

---Each MCP server, its state and its tools with their kinds (nothing is started here).
function M.check_mcp()
  local servers, err = require('sightline.mcp_client').list()
  if not servers then
    h.error('MCP servers: ' .. tostring(err))
    return
  end
  if #servers == 0 then
    h.info('no MCP servers configured; see :help sightline-mcp-client')
  end
  for _, s in ipairs(servers) do
    local from = s.source == 'workspace' and '.mcp.json' or 'setup()'
    local line = ('MCP server %s (%s, %s): %s'):format(s.name, s.transport, from, s.state)
    local tools = {}
    for _, t in ipairs(s.tools or {}) do
      local hints = t.annotations ~= '' and (' [server says: ' .. t.annotations .. ']') or ''
      local refused = (t.refused and t.refused ~= vim.NIL) and (' not offered: ' .. t.refused) or ''
      table.insert(tools, ('%s: %s%s%s'):format(t.api_name, t.kind, hints, refused))
    end
    if s.error and s.error ~= vim.NIL then
      h.error(line .. ': ' .. s.error, tools)
    elseif s.state == 'running' then
      h.ok(line .. (' with %d tools'):format(#tools))
      for _, tool in ipairs(tools) do
        h.info('  ' .. tool)
      end
    elseif s.state == 'disabled' then
      h.info(line .. (s.source == 'workspace' and (' (:Sightline mcp enable ' .. s.name .. ')') or ''))
    else
      h.info(line .. ' (it starts when a turn needs it)')
    end
  end
end

return M
