---@mod sightline.commands  :Sightline {subcommand}: one table, completion per subcommand.
local M = {}

local function sl()
  return require('sightline')
end

local ON_OFF = { 'on', 'off', 'toggle' }

local function fixed(values)
  return function(arglead)
    return vim.tbl_filter(function(v)
      return vim.startswith(v, arglead)
    end, values)
  end
end

---@class sightline.Subcommand
---@field run fun(args: string[], opts: table): (boolean?, string?)
---@field complete? fun(arglead: string, args: string[]): string[]
---@field range? boolean

---@type table<string, sightline.Subcommand>
M.subcommands = {
  chat = { run = function() return sl().chat() end },
  stop = { run = function() return sl().stop() end },
  reset = { run = function() return sl().reset() end },
  restart = { run = function() return sl().restart() end },
  history = { run = function() return sl().history() end },
  accept = { run = function(args) return sl().decide('accept', table.concat(args, ' ')) end },
  reject = { run = function(args) return sl().decide('reject', table.concat(args, ' ')) end },
  compare = { run = function() return sl().compare() end },
  change = {
    run = function(args, opts) return require('sightline.change').command(args, opts) end,
    range = true,
  },
  reveal = {
    run = function(args)
      local ok, msg = require('sightline.reveal').command(args)
      if ok then
        return true
      end
      return nil, msg
    end,
    complete = function(arglead)
      return require('sightline.reveal').complete(arglead, vim.fn.getcmdline())
    end,
  },
  extension = {
    run = function(args) return require('sightline.extensions').command(args) end,
    complete = function(arglead, args) return require('sightline.extensions').complete(arglead, args) end,
  },
  plan = { run = function(args) return sl().plan(args[1] or 'toggle') end, complete = fixed(ON_OFF) },
  autoaccept = { run = function(args) return sl().autoaccept(args[1] or 'toggle') end, complete = fixed(ON_OFF) },
}

-- `extensions` (the listing) takes the same verbs, like the command line's alias.
M.subcommands.extensions = M.subcommands.extension

function M.names()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return names
end

---The :Sightline callback. Refusals show as one message, never a traceback.
function M.run(opts)
  local args = vim.deepcopy(opts.fargs)
  local name = table.remove(args, 1)
  if not name then
    require('sightline.pane').toggle()
    return
  end
  local sub = M.subcommands[name]
  if not sub then
    vim.notify(('sightline: unknown subcommand %q; valid: %s'):format(name, table.concat(M.names(), ', ')),
      vim.log.levels.ERROR)
    return
  end
  local ok, res, err = pcall(sub.run, args, opts)
  -- Refusals also show in the pane (bar and transcript note): a message alone scrolls away.
  if not ok then
    require('sightline.pane').notice('sightline: ' .. tostring(res), vim.log.levels.ERROR)
  elseif not res and err then
    require('sightline.pane').notice(err, vim.log.levels.WARN)
  elseif type(res) == 'string' and not vim.startswith(res, 'OK') then
    vim.notify(res, vim.log.levels.WARN)
  end
end

function M.complete(arglead, cmdline, _)
  local words = vim.split(cmdline:gsub('^%S+%s*', ''), '%s+', { trimempty = false })
  if #words <= 1 then
    return fixed(M.names())(arglead)
  end
  local sub = M.subcommands[words[1]]
  if sub and sub.complete then
    return sub.complete(arglead, vim.list_slice(words, 2))
  end
  return {}
end

return M
