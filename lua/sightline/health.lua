---@mod sightline.health  :checkhealth sightline
local M = {}
local h = vim.health

local function check_python(python, root)
  local script = table.concat({
    'import sys, importlib',
    'print(sys.version.split()[0])',
    'for m in ("pynvim", "anthropic", "platformdirs", "msgpack"):',
    '    try:',
    '        mod = importlib.import_module(m); print(m, "ok", getattr(mod, "__version__", ""))',
    '    except Exception as e:',
    '        print(m, "missing", type(e).__name__)',
  }, '\n')
  local res = vim.system({ python, '-c', script }, { text = true }):wait(15000)
  if res.code ~= 0 then
    h.error(('%s failed to run: %s'):format(python, vim.trim(res.stderr or '')))
    return false
  end
  local lines = vim.split(vim.trim(res.stdout), '\n')
  h.ok(('Python %s (%s)'):format(lines[1], python))
  local all = true
  for i = 2, #lines do
    local name, state, version = lines[i]:match('^(%S+) (%S+)%s*(.*)$')
    if state == 'ok' then
      h.ok(('%s %s importable'):format(name, version))
    else
      all = false
      h.error(('%s is not importable there'):format(name), {
        require('sightline.diagnose').install_advice(root) .. ', or set the `python` option',
      })
    end
  end
  return all
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

---:checkhealth sightline, from the effective configuration.
function M.check()
  h.start('sightline')
  if vim.fn.has('nvim-0.11') == 1 then
    h.ok('Neovim ' .. tostring(vim.version()))
  else
    h.error('Neovim 0.11 or newer is required, this is ' .. tostring(vim.version()))
  end

  -- The effective configuration: defaults ⊕ vim.g.sightline ⊕ the last setup() that took effect.
  local config = require('sightline.config')
  local opts, refused = config.last_opts()
  local cfg, err, unknown = config.build(opts)
  if err then
    h.error('configuration: ' .. err)
  else
    h.ok('configuration is valid')
  end
  if refused then
    h.error('the last setup() was refused (the one before it applies): ' .. refused)
  end
  for _, key in ipairs(unknown or {}) do
    h.warn(('unknown option %s (ignored)'):format(key))
  end
  cfg = cfg or config.get()

  local host = require('sightline.host')
  local python = host.python()
  local python_ok = vim.fn.executable(python) == 1 and check_python(python, host.root)
  if vim.fn.executable(python) ~= 1 then
    h.error(('Python interpreter %q not found'):format(python))
  end

  local provider = config.provider_name(cfg)
  h.info(
    'provider: ' .. provider .. (provider == 'echo' and '' or (' (model ' .. (cfg.provider.model or 'default') .. ')'))
  )
  if provider == 'anthropic' then
    local key = vim.env.ANTHROPIC_API_KEY
    if key and key ~= '' then
      h.ok('an API key is set in $ANTHROPIC_API_KEY')
    elseif cfg.provider.api_key_cmd then
      h.ok('the API key comes from provider.api_key_cmd')
    else
      h.error('no API key: set $ANTHROPIC_API_KEY or provider.api_key_cmd')
    end
  elseif provider == 'acp' then
    M.check_acp(python, host.root, cfg.provider.agent or 'gemini', cfg.provider)
  else
    h.info('no API key configured: the echo provider answers (set $ANTHROPIC_API_KEY for Claude)')
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
end

---Each MCP server, its state and its tools with their kinds (nothing is started here).
function M.check_mcp()
  local servers, err = require('sightline.mcp_client').list()
  if not servers then
    h.error('MCP servers: ' .. tostring(err))
    return
  end
  if #servers == 0 then
    h.info('no MCP servers configured (:help sightline-mcp-client)')
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
