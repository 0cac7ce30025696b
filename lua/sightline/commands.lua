---@mod sightline.commands  :Sightline {subcommand}: one table, completion per subcommand.
local M = {}

local function sl()
  return require('sightline')
end

local ON_OFF = { 'on', 'off', 'toggle' }

---The values a completion offers for what is typed so far.
---@param values string[]
---@param arglead string
---@return string[]
function M.starting(values, arglead)
  return vim.tbl_filter(function(v)
    return vim.startswith(v, arglead)
  end, values)
end

local function fixed(values)
  return function(arglead)
    return M.starting(values, arglead)
  end
end

---A switch that was made, confirmed in one line (the pane's bar shows it too, but the pane
---may be closed); a refusal is passed on as it came.
---@param ok boolean?
---@param err string?
---@param said fun(s: sightline.Status): string what is on now
---@return boolean? ok, string? err
local function confirmed(ok, err, said)
  if ok then
    require('sightline.ui.message').notify('sightline: ' .. said(sl().status()), vim.log.levels.INFO)
  end
  return ok, err
end

---@class sightline.Subcommand
---@field run fun(args: string[], opts: table): (boolean?, string?)
---@field complete? fun(arglead: string, args: string[]): string[]
---@field range? boolean
---@field max_args? integer arguments it takes at most (extra words are refused, not ignored)

---@type table<string, sightline.Subcommand>
M.subcommands = {
  chat = {
    run = function()
      return sl().chat()
    end,
    max_args = 0,
  },
  chats = {
    run = function()
      return require('sightline.ui.chats').pick()
    end,
    max_args = 0,
  },
  stop = {
    run = function()
      -- Nothing to stop is a message, not a note in the pane: the conversation is as it was.
      local state = sl().status().state
      if state ~= 'working' and state ~= 'awaiting_decision' then
        -- A sign-in waiting for its code (:Sightline login copilot) is what stop ends then.
        local host = require('sightline.host')
        local res = host.running() and host.request('provider.login_cancel') or nil
        if res and res.cancelled then
          return true
        end
        require('sightline.ui.message').notify('sightline: no turn is running', vim.log.levels.INFO)
        return true
      end
      return sl().stop()
    end,
    max_args = 0,
  },
  reset = {
    run = function()
      return sl().reset()
    end,
    max_args = 0,
  },
  compact = {
    -- The summary is made on the core's worker thread; this returns at once.
    run = function()
      local res, err = require('sightline.host').request('agent.compact')
      if not res then
        return nil, err
      end
      return true
    end,
    max_args = 0,
  },
  restart = {
    run = function()
      return sl().restart()
    end,
    max_args = 0,
  },
  paste = {
    run = function()
      return require('sightline.ui.paste').paste()
    end,
    max_args = 0,
  },
  history = {
    run = function(args)
      return require('sightline.ui.history').command(args)
    end,
    complete = fixed({ 'rename', 'delete' }),
  },
  -- Steering (agent/steering.py, sightline.ui.pane.steer).
  regenerate = {
    run = function()
      return require('sightline.ui.pane.steer').regenerate()
    end,
    max_args = 0,
  },
  fork = {
    run = function()
      return require('sightline.ui.pane.steer').fork(true)
    end,
    max_args = 0,
  },
  steer = {
    run = function()
      return require('sightline.ui.pane.steer').steer()
    end,
    max_args = 0,
  },
  rename = {
    run = function(args)
      return require('sightline.ui.history').rename_current(table.concat(args, ' '))
    end,
  },
  rewind = {
    run = function(args)
      return require('sightline.ui.rewind').command(args)
    end,
    max_args = 2,
    complete = fixed({ 'fork' }),
  },
  review = {
    run = function(args)
      return require('sightline.ui.review').command(args)
    end,
    max_args = 1,
  },
  accept = {
    run = function(args)
      return sl().decide('accept', table.concat(args, ' '))
    end,
    complete = fixed({ 'always', 'conversation' }), -- keep it (:help sightline-approvals)
  },
  reject = {
    run = function(args)
      return sl().decide('reject', table.concat(args, ' '))
    end,
    complete = fixed({ 'always', 'conversation' }),
  },
  approvals = {
    run = function(args)
      return require('sightline.approvals').command(args)
    end,
    complete = function(arglead, args)
      return require('sightline.approvals').complete(arglead, args)
    end,
    max_args = 2,
  },
  compare = {
    run = function()
      return sl().compare()
    end,
    max_args = 0,
  },
  change = {
    run = function(args, opts)
      return require('sightline.ui.change').command(args, opts)
    end,
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
    run = function(args)
      return require('sightline.extensions').command(args)
    end,
    complete = function(arglead, args)
      return require('sightline.extensions').complete(arglead, args)
    end,
  },
  login = {
    -- The sign-in waits for GitHub on the core's worker thread; the pane shows the code.
    run = function(args)
      if not args[1] then
        return nil, 'login: which provider? (:Sightline login copilot)'
      end
      local res, err = require('sightline.host').request('provider.login', { name = args[1] })
      if not res then
        return nil, err
      end
      return sl().chat()
    end,
    complete = fixed({ 'copilot' }),
    max_args = 1,
  },
  model = {
    -- The core knows the models and the current one; the list is fetched off the UI thread
    -- and cached, so only the first <Tab> waits (at most MODEL_WAIT_MS).
    run = function(args)
      local res, err = require('sightline.host').request('agent.model', { name = args[1] })
      if not res then
        return nil, err
      end
      -- Said either way: with the pane closed nothing else shows that the switch was made.
      local said = args[1] and 'sightline: model %s from the next request on' or 'sightline: model %s'
      said = said:format(res.model)
      if not args[1] then
        -- The models it lists, each with what the provider says of it (copilot: the premium
        -- multiplier); why there is no list when it could not be had (the current one stays).
        local known = require('sightline.host').request('agent.models', { wait_ms = 800 })
        local notes = known and known.notes or {}
        local each = {}
        for _, name in ipairs(known and known.models or {}) do
          each[#each + 1] = notes[name] and ('%s (%s)'):format(name, notes[name]) or name
        end
        if known and known.error then
          said = said .. '; no model list: ' .. known.error
        elseif #each > 1 then
          said = said .. '; models: ' .. table.concat(each, ', ')
        end
      end
      require('sightline.ui.message').notify(said, vim.log.levels.INFO)
      return true
    end,
    complete = function(arglead)
      local res = require('sightline.host').request('agent.models', { wait_ms = 800 })
      return fixed(res and res.models or {})(arglead)
    end,
    max_args = 1,
  },
  mode = {
    -- An ACP agent's own modes (the agent lists them once it has started); plan mode is `plan`.
    run = function(args)
      local res, err = require('sightline.host').request('agent.agent_mode', { name = args[1] })
      if not res then
        return nil, err
      end
      local said = args[1] and 'sightline: agent mode %s' or 'sightline: agent mode %s (of %s)'
      local msg = said:format(tostring(res.mode or '?'), table.concat(res.modes or {}, ', '))
      require('sightline.ui.message').notify(msg, vim.log.levels.INFO)
      return true
    end,
    complete = function(arglead)
      local res = require('sightline.host').request('agent.agent_mode', {})
      return fixed(res and res.modes or {})(arglead)
    end,
    max_args = 1,
  },
  sessions = {
    -- An ACP agent's own sessions of this workspace (session/list): pick one to resume it.
    run = function()
      local host = require('sightline.host')
      local res, err = host.request('agent.sessions', {})
      if not res then
        return nil, err
      end
      local list = res.sessions or {}
      if #list == 0 then
        require('sightline.ui.message').notify('sightline: the agent has no sessions here', vim.log.levels.INFO)
        return true
      end
      vim.ui.select(list, {
        prompt = 'Resume the agent session',
        format_item = function(item)
          local title = item.title ~= '' and item.title or item.id
          return item.updated ~= '' and (title .. ' · ' .. item.updated) or title
        end,
      }, function(item)
        if not item then
          return
        end
        local ok, why = host.request('agent.resume', { id = item.id })
        if not ok then
          require('sightline.ui.message').notify(why or 'sightline: could not resume', vim.log.levels.WARN)
          return
        end
        require('sightline.ui.pane').open()
      end)
      return true
    end,
    max_args = 0,
  },
  plan = {
    run = function(args)
      local ok, err = sl().plan(args[1] or 'toggle')
      return confirmed(ok, err, function(s)
        return 'plan mode ' .. (s.mode == 'plan' and 'on' or 'off')
      end)
    end,
    complete = fixed(ON_OFF),
    max_args = 1,
  },
  autoaccept = {
    run = function(args)
      local ok, err = sl().autoaccept(args[1] or 'toggle')
      return confirmed(ok, err, function(s)
        return 'autoaccept ' .. (s.autoaccept and 'on' or 'off')
      end)
    end,
    complete = fixed(ON_OFF),
    max_args = 1,
  },
  skills = {
    run = function(args)
      return require('sightline.skills').command(args)
    end,
    complete = function(arglead, args)
      return require('sightline.skills').complete(arglead, args)
    end,
  },
  mcp = {
    run = function(args)
      return require('sightline.mcp_client').command(args)
    end,
    complete = function(arglead, args)
      return require('sightline.mcp_client').complete(arglead, args)
    end,
  },
}

-- `extensions` (the listing) takes the same verbs, like the command line's alias.
M.subcommands.extensions = M.subcommands.extension

---The subcommand names, sorted (for completion and the usage line).
---@return string[]
function M.names()
  local names = vim.tbl_keys(M.subcommands)
  table.sort(names)
  return names
end

-- A refusal may quote what was typed: a line of it never floods the message area.
local function shorten(msg)
  return (
    tostring(msg):gsub('[^\n]+', function(line)
      return #line > 300 and line:sub(1, 300) .. '…' or line
    end)
  )
end

---The :Sightline callback. Refusals show as one message, never a traceback.
---@param opts table the user command's opts (fargs, range, line1, line2, bang)
---@return boolean? ran true when the subcommand ran without a refusal (for `/` commands)
function M.run(opts)
  local args = vim.deepcopy(opts.fargs)
  local name = table.remove(args, 1)
  if not name then
    require('sightline.ui.pane').toggle()
    return true
  end
  local sub = M.subcommands[name]
  if not sub then
    require('sightline.ui.message').notify(
      ('sightline: unknown subcommand %q; valid: %s'):format(name:sub(1, 60), table.concat(M.names(), ', ')),
      vim.log.levels.ERROR
    )
    return
  end
  if sub.max_args and #args > sub.max_args then
    local takes = sub.max_args == 0 and 'no arguments' or ('at most %d argument'):format(sub.max_args)
    require('sightline.ui.message').notify(
      ('sightline: :Sightline %s takes %s, got %q'):format(name, takes, table.concat(args, ' '):sub(1, 60)),
      vim.log.levels.ERROR
    )
    return
  end
  local ok, res, err = pcall(sub.run, args, opts)
  -- Refusals also show in the pane (bar and transcript note): a message alone scrolls away.
  if not ok then
    -- A bug, not the user's input: one line without the Lua location or traceback.
    local line = (tostring(res):match('^[^\n]*') or '?'):gsub('^.-%.lua:%d+: ', ''):sub(1, 200)
    require('sightline.ui.pane').notice(
      ('sightline: :Sightline %s: internal error: %s'):format(name, line),
      vim.log.levels.ERROR
    )
  elseif not res and err then
    require('sightline.ui.pane').notice(shorten(err), vim.log.levels.WARN)
  elseif type(res) == 'string' and not vim.startswith(res, 'OK') then
    require('sightline.ui.message').notify(shorten(res), vim.log.levels.WARN)
  else
    return res ~= nil and res ~= false
  end
end

---Completion of :Sightline: subcommand names, then that subcommand's arguments.
---@param arglead string
---@param cmdline string
---@return string[]
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
