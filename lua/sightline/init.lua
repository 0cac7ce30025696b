---@mod sightline  Public Lua API. Actions return true, or nil and a message when refused; never throw.
local M = {}

local function host()
  return require('sightline.host')
end

local function notify_unknown(unknown)
  if #unknown > 0 then
    local msg = #unknown == 1 and unknown[1] .. ': unknown option' or 'unknown options: ' .. table.concat(unknown, ', ')
    require('sightline.ui.message').notify(msg, vim.log.levels.WARN)
  end
end

local function configure(opts)
  local config = require('sightline.config')
  local ok, err, unknown = config.setup(opts)
  if not ok then
    return nil, err
  end
  notify_unknown(unknown)
  require('sightline.keymaps').apply(config.get().mappings, true)
  -- Only a running core needs the new configuration; never load the host for it.
  local running = package.loaded['sightline.host']
  if running then
    running.configure()
  end
  return true
end

---Configure (optional, repeatable; each call starts from the defaults).
---@param opts sightline.Config|table? a partial configuration (|sightline-options|)
---@return boolean? ok, string? err
function M.setup(opts)
  -- The commonest call, setup({}) with no vim.g.sightline, has nothing to check: leave the
  -- config module unloaded (start-up budget ≤ 1 ms); it builds the defaults when first used.
  if
    (opts == nil or type(opts) == 'table' and next(opts) == nil)
    and vim.g.sightline == nil
    and not package.loaded['sightline.config']
  then
    M._empty_setup = true
    require('sightline.keymaps').apply(nil, true)
    return true
  end
  local ok, res, err = pcall(configure, opts)
  if not ok then -- a bug, not the user's input: one line, no traceback
    res, err =
      nil,
      'sightline.setup: internal error: ' .. (tostring(res):match('^[^\n]*'):gsub('^.-%.lua:%d+: ', ''):sub(1, 200))
  end
  if not res then
    require('sightline.ui.message').notify(err, vim.log.levels.ERROR)
    return nil, err
  end
  return true
end

---Open or focus the agent pane.
---@return boolean? ok, string? err
function M.chat()
  require('sightline.ui.pane').open()
  local _, err = host().ensure()
  if err then
    return nil, err
  end
  return true
end

---Send a message; returns once the turn was accepted.
---@param text string
---@param opts sightline.Range? a flat range for a scoped turn
---@return boolean? ok, string? err
function M.send(text, opts)
  if type(text) ~= 'string' then
    return nil, 'sightline.send: text must be a string'
  end
  if opts ~= nil and type(opts) ~= 'table' then
    return nil, 'sightline.send: opts must be a table'
  end
  local params = vim.tbl_extend('force', opts or {}, { text = text, workspace = vim.fn.getcwd(-1, -1) })
  local res, err = host().request('agent.send', params)
  if not res then
    return nil, err
  end
  return true
end

---Stop the running turn.
---@return boolean? ok, string? err
function M.stop()
  if not host().running() then
    return nil, 'sightline: no turn is running'
  end
  local res, err = host().request('agent.stop')
  if not res then
    return nil, err
  end
  if not res.stopped then
    return nil, 'sightline: no turn is running'
  end
  return true
end

---Start a new conversation.
---@return boolean? ok, string? err
function M.reset()
  local res, err = host().request('agent.reset')
  if not res then
    return nil, err
  end
  -- A new conversation starts clean: a refusal said in the old one is not carried over.
  local pane = package.loaded['sightline.ui.pane']
  if pane then
    pane.clear_notice()
  end
  return true
end

---accept | reject, with an optional reason told to the model; the reason `always` or
---`conversation` keeps the decision instead (:help sightline-approvals).
---@param decision 'accept'|'reject'
---@param reason string?
---@return boolean? ok, string? err
function M.decide(decision, reason)
  if decision ~= 'accept' and decision ~= 'reject' then
    return nil, ("sightline.decide: expected 'accept' or 'reject', got %s"):format(vim.inspect(decision))
  end
  if not host().running() then
    return nil, 'sightline: nothing is waiting for a decision'
  end
  local res, err = host().request('agent.decide', { decision = decision, reason = reason })
  return res and true or nil, err
end

---Open the compare view of the proposal that waits: a tab with before and after side by side.
---Edits made in the after side are what gets applied on accept.
---@return boolean? ok, string? err
function M.compare()
  if not host().running() then
    return nil, 'sightline: nothing to compare: no edit is waiting for a decision'
  end
  local res, err = host().request('agent.compare')
  if not res then
    return nil, err
  end
  return require('sightline.ui.compare').compare(res.proposal)
end

---Change with Agent: open the instruction dialog for a flat range (default: the last visual
---selection). Sending starts a turn that can change that text and nothing else.
---@param opts sightline.Range?
---@return boolean? ok, string? err
function M.change(opts)
  return require('sightline.ui.change').change(opts)
end

---Show a code range with a transient highlight; never moves a cursor or the selection.
---Returns "OK…" or an error text (the seed's contract); never throws.
---@param opts sightline.RevealOpts
---@return string
function M.reveal(opts)
  return require('sightline.reveal').reveal(opts)
end

---Open a file in the editor window, move the cursor and select (the opposite of reveal).
---@param opts sightline.GotoOpts
---@return string "OK…" or an error text
function M.go_to_position(opts)
  return require('sightline.reveal').go_to_position(opts)
end

---The status of every extension the workspace sees: name, version, source, active,
---enabled, error, path and (when the manifest has one) description.
---@return table[]? statuses, string? err
function M.extensions()
  return require('sightline.extensions').list()
end

---@alias sightline.Switch 'on'|'off'|'toggle'|boolean

---Set plan mode: 'on' | 'off' | 'toggle'.
---@param value sightline.Switch? nil toggles
---@return boolean? ok, string? err
function M.plan(value)
  return M._switch('agent.mode', value, function(s)
    return s.mode == 'plan'
  end, function(on)
    return { mode = on and 'plan' or 'normal' }
  end)
end

---Set autoaccept: 'on' | 'off' | 'toggle' (edits only; commands always ask).
---@param value sightline.Switch? nil toggles
---@return boolean? ok, string? err
function M.autoaccept(value)
  return M._switch('agent.autoaccept', value, function(s)
    return s.autoaccept
  end, function(on)
    return { value = on }
  end)
end

---@param method string the core's request
---@param value sightline.Switch?
---@param current fun(s: sightline.Status): boolean
---@param params fun(on: boolean): table
---@return boolean? ok, string? err
function M._switch(method, value, current, params)
  local on
  if value == 'on' or value == true then
    on = true
  elseif value == 'off' or value == false then
    on = false
  elseif value == 'toggle' or value == nil then
    on = not current(M.status())
  else
    return nil, ('sightline: expected on, off or toggle, got %s'):format(vim.inspect(value))
  end
  local res, err = host().request(method, params(on))
  return res and true or nil, err
end

---@class sightline.Status
---@field state 'stopped'|'starting'|'idle'|'working'|'awaiting_decision'
---@field provider string
---@field model string
---@field mode 'normal'|'plan'
---@field autoaccept boolean
---@field workspace string
---@field scope? table the range a scoped turn may change
---@field pending? string what waits for a decision, in one line
---@field tokens? integer tokens used in this conversation
---@field capabilities? {tools: boolean, vision: boolean, thinking: string?, context_window: integer?, local: boolean} what the model can do

---Status from the Lua-side mirror; never starts the core. Usable from a statusline.
---@return sightline.Status
function M.status()
  local config = require('sightline.config')
  local cfg = config.get()
  local mirror = host().status()
  local provider = config.provider_name(cfg)
  local out = {
    state = mirror.state or 'stopped',
    provider = provider,
    model = provider == 'echo' and 'echo' or cfg.provider.model, -- nil: the core names the default
    mode = 'normal',
    autoaccept = cfg.autoaccept,
    workspace = vim.fn.getcwd(-1, -1),
  }
  -- The fields |sightline.status()| documents (tests/unit/test_status_doc.py holds the two equal).
  local shown = {
    'provider',
    'model',
    'mode',
    'autoaccept',
    'workspace',
    'scope',
    'pending',
    'tokens',
    'cost',
    'capabilities',
    'conversation',
    'read_only',
    'branch',
    'queued',
    'agent_mode',
    'agent_options',
  }
  for _, key in ipairs(shown) do
    if mirror[key] ~= nil and mirror[key] ~= vim.NIL then
      out[key] = mirror[key]
    end
  end
  return out
end

---Pick a conversation of this workspace and reopen it in the pane.
---@return boolean? ok, string? err
function M.history()
  return require('sightline.ui.history').open()
end

---Reopen a conversation of the history store in the pane.
---@param path string
---@return boolean? ok, string? err
function M.open_conversation(path)
  -- The core opens only files of the history store and refuses anything else unchanged.
  if type(path) ~= 'string' or path == '' then
    return nil, 'sightline: open_conversation: expected the path of a conversation (a string)'
  end
  -- Into this tab page's pane (a new one when another tab shows every pane there is).
  require('sightline.ui.pane').claim()
  local res, err = host().request('history.open', { path = path })
  if not res then
    return nil, err
  end
  require('sightline.ui.pane').open()
  return true
end

---Restart the core: a new process, which reopens the current conversation.
---@return boolean? ok, string? err
function M.restart()
  local _, err = host().restart()
  return err == nil or nil, err
end

-- One rule for every public entry: its arguments are checked against PARAMS and no Lua
-- error escapes (sightline.guard, loaded on the first call rather than at start-up).
-- Functions without parameters refuse arguments; one missing here checks none.
local PARAMS = {
  chat = {},
  stop = {},
  reset = {},
  status = {},
  restart = {},
  compare = {},
  extensions = {},
  history = {},
  send = { 'text', 'range?' },
  decide = { 'decision', 'reason' },
  change = { 'range?' },
  reveal = { 'reveal' },
  go_to_position = { 'reveal' },
  plan = { 'switch' },
  autoaccept = { 'switch' },
  open_conversation = { 'path' },
}
for name, fn in pairs(M) do
  if type(fn) == 'function' and name:sub(1, 1) ~= '_' and name ~= 'setup' then
    local params = PARAMS[name] or false
    M[name] = function(...)
      return require('sightline.guard').call(name, params, fn, ...)
    end
  end
end

return M
