---@mod sightline.skills  :Sightline skills [list] | enable {name} | disable {name}.
---The core finds the skills and words the messages; this parses the command line,
---completes skill names and echoes the listing.
local M = {}

M.VERBS = { 'list', 'enable', 'disable' }

local function request(method, params)
  return require('sightline.host').workspace_request(method, params)
end

local STATE_HL = { on = 'DiagnosticOk', off = 'Comment', changed = 'WarningMsg', skipped = 'ErrorMsg' }

---The listing as echo chunks, one skill per line.
---@param rows table[]
---@return table[] chunks
function M.chunks(rows)
  if #rows == 0 then
    return { { 'No skills: add SKILL.md folders to ~/.agents/skills or .agents/skills (:help sightline-skills)' } }
  end
  local chunks = {}
  for i, s in ipairs(rows) do
    if s.state == 'skipped' then
      table.insert(chunks, { ('%s  '):format(s.name) })
      table.insert(chunks, { 'skipped: ' .. tostring(s.error), 'ErrorMsg' })
    else
      table.insert(chunks, { ('%s  %s · '):format(s.name, s.origin) })
      table.insert(chunks, { s.state, STATE_HL[s.state] })
      if s.state == 'off' then
        table.insert(
          chunks,
          { (' (carried by this workspace: :Sightline skills enable %s)'):format(s.name), 'Comment' }
        )
      elseif s.state == 'changed' then
        table.insert(chunks, {
          (' (its files changed since you enabled it: :Sightline skills enable %s)'):format(s.name),
          'WarningMsg',
        })
      end
      table.insert(chunks, { '  ' .. s.description, 'Comment' })
    end
    if i < #rows then
      table.insert(chunks, { '\n' })
    end
  end
  return chunks
end

---@param args string[] the words after `skills`
---@return boolean? ok, string? err
function M.command(args)
  local verb = args[1] or 'list'
  if verb == 'list' then
    local res, err = request('skills.list')
    if not res then
      return nil, err
    end
    vim.api.nvim_echo(M.chunks(res.skills), true, {})
    return true
  end
  if (verb == 'enable' or verb == 'disable') and args[2] and not args[3] then
    local res, err = request('skills.' .. verb, { name = args[2] })
    if not res then
      return nil, err
    end
    require('sightline.ui.message').notify(res.message, vim.log.levels.INFO)
    return true
  end
  return nil, 'sightline: usage: :Sightline skills [list] | enable {name} | disable {name}'
end

---@param arglead string
---@param args string[] the words after `skills`
---@return string[]
function M.complete(arglead, args)
  local function starting(values)
    return require('sightline.commands').starting(values, arglead)
  end
  if #args <= 1 then
    return starting(M.VERBS)
  end
  if #args == 2 and (args[1] == 'enable' or args[1] == 'disable') then
    local res = request('skills.list')
    local names = {}
    for _, s in ipairs(res and res.skills or {}) do
      if s.state ~= 'skipped' then
        table.insert(names, s.name)
      end
    end
    return starting(names)
  end
  return {}
end

return M
