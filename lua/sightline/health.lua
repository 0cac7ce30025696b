---@mod sightline.health  :checkhealth sightline
local M = {}
local h = vim.health

local function check_python(python)
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
      h.error(('%s is not importable there'):format(name), { 'run `make venv` in the plugin folder, or set the `python` option' })
    end
  end
  return all
end

function M.check()
  h.start('sightline')
  if vim.fn.has('nvim-0.11') == 1 then
    h.ok('Neovim ' .. tostring(vim.version()))
  else
    h.error('Neovim 0.11 or newer is required, this is ' .. tostring(vim.version()))
  end

  local config = require('sightline.config')
  local cfg, err, unknown = config.build(config.last_opts())
  if err then
    h.error('configuration: ' .. err)
  else
    h.ok('configuration is valid')
  end
  for _, key in ipairs(unknown or {}) do
    h.warn(('unknown option %s (ignored)'):format(key))
  end
  cfg = cfg or config.get()

  local host = require('sightline.host')
  local python = host.python()
  local python_ok = vim.fn.executable(python) == 1 and check_python(python)
  if vim.fn.executable(python) ~= 1 then
    h.error(('Python interpreter %q not found'):format(python))
  end

  local provider = config.provider_name(cfg)
  h.info('provider: ' .. provider .. (provider == 'echo' and '' or (' (model ' .. cfg.provider.model .. ')')))
  if provider == 'anthropic' then
    local key = vim.env.ANTHROPIC_API_KEY
    if key and key ~= '' then
      h.ok('an API key is set in $ANTHROPIC_API_KEY')
    elseif cfg.provider.api_key_cmd then
      h.ok('the API key comes from provider.api_key_cmd')
    else
      h.error('no API key: set $ANTHROPIC_API_KEY or provider.api_key_cmd')
    end
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
