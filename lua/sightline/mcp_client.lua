---@mod sightline.mcp_client  :Sightline mcp list|enable|disable|restart {server}.
---The core keeps the servers and words the messages; this module parses the command line,
---completes server names and shows the listing (also used by :checkhealth).
local M = {}

M.VERBS = { 'list', 'enable', 'disable', 'restart' }

local function request(method, params)
  return require('sightline.host').workspace_request(method, params)
end

---The servers this workspace sees: name, source, transport, enabled, state, error, tools.
---@return table[]? servers, string? err
function M.list()
  local res, err = request('mcp.list')
  if not res then
    return nil, err
  end
  return res.servers
end

local STATE_HL =
  { running = 'DiagnosticOk', failed = 'ErrorMsg', invalid = 'ErrorMsg', changed = 'WarningMsg', disabled = 'Comment' }

---The listing as echo chunks; one server per line, then its tools with their kinds.
---@param servers table[]
---@return table[] chunks
function M.chunks(servers)
  if #servers == 0 then
    return {
      { 'No MCP servers: add mcp.servers to setup() or a .mcp.json to the workspace (:help sightline-mcp-client)' },
    }
  end
  local chunks = {}
  for i, s in ipairs(servers) do
    local from = s.source == 'workspace' and '.mcp.json' or 'setup()'
    table.insert(chunks, { ('%s  %s · %s · '):format(s.name, s.transport, from) })
    table.insert(chunks, { s.state, STATE_HL[s.state] })
    if s.error and s.error ~= vim.NIL then
      table.insert(chunks, { ': ' .. s.error, 'ErrorMsg' })
    elseif s.state == 'disabled' and s.source == 'workspace' then
      table.insert(chunks, { (' (carried by this workspace: :Sightline mcp enable %s)'):format(s.name), 'Comment' })
    elseif s.state == 'stopped' then
      table.insert(chunks, { ' (starts when a turn needs it)', 'Comment' })
    end
    if s.resources and s.resources > 0 then
      table.insert(chunks, { (' · %d resources'):format(s.resources) })
    end
    for _, t in ipairs(s.tools or {}) do
      local line = ('\n    %-40s %-5s'):format(t.api_name, t.kind)
      table.insert(chunks, { line, t.kind == 'read' and 'DiagnosticOk' or 'WarningMsg' })
      if t.annotations ~= '' then
        table.insert(chunks, { ' server says: ' .. t.annotations, 'Comment' })
      end
      if t.refused and t.refused ~= vim.NIL then
        table.insert(chunks, { ' not offered: ' .. t.refused, 'ErrorMsg' })
      end
    end
    if i < #servers then
      table.insert(chunks, { '\n' })
    end
  end
  return chunks
end

---:Sightline mcp list: the configured MCP servers and their state, echoed.
---@return boolean? ok, string? err
function M.show()
  local servers, err = M.list()
  if not servers then
    return nil, err
  end
  vim.api.nvim_echo(M.chunks(servers), true, {})
  return true
end

---@param args string[] the words after `mcp`
---@return boolean? ok, string? err
function M.command(args)
  local verb = args[1] or 'list'
  if verb == 'list' then
    return M.show()
  elseif vim.tbl_contains(M.VERBS, verb) then
    local name = args[2]
    if not name then
      return nil, ('sightline: usage: :Sightline mcp %s {server}'):format(verb)
    end
    local res, err = request('mcp.' .. verb, { name = name })
    if not res then
      return nil, err
    end
    require('sightline.ui.message').notify(res.message, vim.log.levels.INFO)
    return true
  end
  return nil, ('sightline: unknown mcp command %q; valid: %s'):format(verb, table.concat(M.VERBS, ', '))
end

---@param arglead string
---@param args string[] words after `mcp`, the one being typed last
---@return string[]
function M.complete(arglead, args)
  local function starting(values)
    return require('sightline.commands').starting(values, arglead)
  end
  if #args <= 1 then
    return starting(M.VERBS)
  end
  if #args == 2 and args[1] ~= 'list' then
    local names = {}
    for _, s in ipairs(M.list() or {}) do
      if s.state ~= 'invalid' or s.name ~= '.mcp.json' then
        table.insert(names, s.name)
      end
    end
    return starting(names)
  end
  return {}
end

return M
