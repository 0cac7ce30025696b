---@mod sightline.extensions  :Sightline extension list|install|uninstall|enable|disable.
---The core does the work (the same code as `sightline extensions …`) and words the
---messages; this module parses the command line, completes it and shows the answers.
local M = {}

M.VERBS = { 'list', 'install', 'uninstall', 'enable', 'disable' }

local function request(method, params)
  return require('sightline.host').workspace_request(method, params)
end

---The status of every extension this workspace sees (the core's `to_dict()`s).
---@return table[]? statuses, string? err
function M.list()
  local res, err = request('extensions.list')
  if not res then
    return nil, err
  end
  return res.extensions
end

---Echo the listing like `:ls` does (kept in `:messages`).
---@return boolean? ok, string? err
function M.show()
  local res, err = request('extensions.list')
  if not res then
    return nil, err
  end
  local chunks = {}
  for i, row in ipairs(res.listing) do
    local eol = i < #res.listing and '\n' or ''
    table.insert(chunks, { row[1] .. eol, row[2] ~= '' and row[2] or nil })
  end
  vim.api.nvim_echo(chunks, true, {})
  return true
end

---@param method string
---@param params table
---@return boolean? ok, string? err
local function act(method, params)
  local res, err = request(method, params)
  if not res then
    return nil, err
  end
  require('sightline.ui.message').notify(res.message, vim.log.levels.INFO)
  return true
end

---Split `{name} [--workspace]` (the flag may come first).
---@param args string[]
---@return string? name, boolean workspace_scope
local function name_and_scope(args)
  local name, scoped = nil, false
  for _, arg in ipairs(args) do
    if arg == '--workspace' then
      scoped = true
    elseif not name then
      name = arg
    end
  end
  return name, scoped
end

---`:Sightline extension {verb} …` (also `:Sightline extensions …`; no verb lists).
---@param args string[] the words after the subcommand
---@return boolean? ok, string? err
function M.command(args)
  args = vim.deepcopy(args)
  local verb = table.remove(args, 1) or 'list'
  if verb == 'list' then
    return M.show()
  elseif verb == 'install' then
    local force = vim.tbl_contains(args, '--force')
    local path = table.concat(
      vim.tbl_filter(function(a)
        return a ~= '--force'
      end, args),
      ' '
    )
    if path == '' then
      return nil, 'sightline: usage: :Sightline extension install {path} [--force]'
    end
    return act('extensions.install', { path = vim.fn.fnamemodify(path, ':p'), force = force })
  elseif verb == 'uninstall' or verb == 'enable' or verb == 'disable' then
    local name, scoped = name_and_scope(args)
    if not name then
      local usage = verb == 'uninstall' and '{name}' or '{name} [--workspace]'
      return nil, ('sightline: usage: :Sightline extension %s %s'):format(verb, usage)
    end
    return act('extensions.' .. verb, { name = name, workspace_scope = scoped })
  end
  return nil, ('sightline: unknown extension command %q; valid: %s'):format(verb, table.concat(M.VERBS, ', '))
end

---Names for completion: installed ones for uninstall, all for enable/disable.
---@param verb string
---@return string[]
local function names(verb)
  local out = {}
  for _, s in ipairs(M.list() or {}) do
    if verb ~= 'uninstall' or s.source == 'user' then
      table.insert(out, s.name)
    end
  end
  return out
end

---@param arglead string
---@param args string[] words after the subcommand, the one being typed last
---@return string[]
function M.complete(arglead, args)
  local function starting(values)
    return require('sightline.commands').starting(values, arglead)
  end
  if #args <= 1 then
    return starting(M.VERBS)
  end
  local verb = args[1]
  if verb == 'install' then
    return vim.startswith(arglead, '-') and starting({ '--force' }) or vim.fn.getcompletion(arglead, 'dir')
  elseif verb == 'enable' or verb == 'disable' then
    return #args == 2 and starting(names(verb)) or starting({ '--workspace' })
  elseif verb == 'uninstall' and #args == 2 then
    return starting(names(verb))
  end
  return {}
end

return M
