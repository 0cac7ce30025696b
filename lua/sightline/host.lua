---@mod sightline.host  Start, stop and talk to the Python core (one per Neovim, started lazily).
local M = {}

local root = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h:h:h')
M.root = root

local STDERR_KEEP = 20
-- How long a restart waits for the old core to exit before starting the new one: the old
-- one holds the conversation's lock until it is gone (else the new core opens it read-only).
local STOP_WAIT_MS = 2000

local S = {
  chan = nil, ---@type integer?
  expected = {}, ---@type table<integer, true> jobs stopped on purpose: their exit is no crash
  stderr = {}, ---@type string[]
  -- Per pane (one a tab page, sightline.ui.pane.state): the path of its conversation,
  -- reopened by a new core, and the mirror of the core's status of it.
  conversations = {}, ---@type table<integer, string>
  statuses = { { state = 'stopped' } }, ---@type table<integer, table>
}

local function pane_state()
  return require('sightline.ui.pane.state')
end

---The mirror of pane `id`'s status (a pane the core has not answered for yet: the first
---pane's, as a new conversation of the same core starts).
---@param id integer
---@return table
local function mirror(id)
  local status = S.statuses[id]
  if not status then
    local main = S.statuses[1]
    status = { state = main.state == 'stopped' and 'stopped' or 'idle', provider = main.provider, model = main.model }
    S.statuses[id] = status
  end
  return status
end

---The interpreter for the core: `python` option, the plugin's .venv, g:python3_host_prog, python3.
function M.python()
  local cfg = require('sightline.config').get()
  if cfg.python then
    return cfg.python
  end
  local venv = root .. '/.venv/bin/python'
  if vim.fn.executable(venv) == 1 then
    return venv
  end
  local prog = vim.g.python3_host_prog
  if type(prog) == 'string' and prog ~= '' then
    return vim.fn.expand(prog)
  end
  return 'python3'
end

---The whole effective config, every default filled in (config.lua is the one schema): the
---core keeps no defaults of its own and refuses a config with a key missing.
local function config_for_core()
  local config = require('sightline.config')
  local cfg = vim.deepcopy(config.get())
  cfg.provider.name = config.provider_name(cfg)
  return cfg
end
M._config_for_core = config_for_core

local function on_stderr(_, data)
  for _, line in ipairs(data or {}) do
    if line ~= '' then
      table.insert(S.stderr, line)
      if #S.stderr > STDERR_KEEP then
        table.remove(S.stderr, 1)
      end
    end
  end
end

---The mirror of a core that is gone: nothing runs and nothing waits for a decision.
local function stopped_status(id)
  local status = vim.deepcopy(mirror(id))
  status.state = 'stopped'
  status.pending = nil -- tbl_extend would ignore a nil value
  status.pending_kind = nil
  status.scope = nil
  return status
end

---What the Lua side drew or watched for the core that asked goes with that core.
local function forget_core_state()
  require('sightline.ui.receive').core_gone()
end

local function on_exit(job, code)
  if S.expected[job] then
    -- Stopped on purpose (restart, shutdown): the flag is per job, so a later crash of
    -- another core is still reported.
    S.expected[job] = nil
    return
  end
  if S.chan ~= job then
    return
  end
  local was = 'idle'
  for id, status in pairs(S.statuses) do
    was = status.state == 'working' and 'working' or was
    S.statuses[id] = stopped_status(id)
  end
  S.chan = nil
  forget_core_state()
  local tail = table.concat(vim.list_slice(S.stderr, math.max(1, #S.stderr - 5)), '\n')
  -- What happened first: a message cut to one screen line keeps it (ui/message.lua).
  local msg = ('sightline: the core exited%s (code %d); the next request starts a new one.'):format(
    was == 'working' and ' during a turn' or '',
    code
  )
  if tail ~= '' then
    msg = msg .. '\n' .. tail
  end
  msg = require('sightline.diagnose').for_exit(S.stderr, M.python(), root, msg)
  vim.schedule(function()
    if msg then
      require('sightline.ui.message').notify(msg, vim.log.levels.ERROR)
    end
    require('sightline.ui.receive').core_exit(msg)
  end)
end

---Start the core if it is not running. Does not wait for it: requests queue on the channel.
---@return integer? chan, string? err
function M.ensure()
  if S.chan then
    return S.chan
  end
  local python = M.python()
  if vim.fn.executable(python) ~= 1 then
    return nil,
      ('sightline: Python interpreter %q not found (option `python`, or run `make venv` in %s)'):format(python, root)
  end
  local pythonpath = root .. '/python'
  if vim.env.PYTHONPATH and vim.env.PYTHONPATH ~= '' then
    pythonpath = pythonpath .. ':' .. vim.env.PYTHONPATH
  end
  S.stderr = {}
  local ok, job = pcall(vim.fn.jobstart, { python, '-m', 'sightline.host' }, {
    rpc = true,
    env = { PYTHONPATH = pythonpath },
    on_stderr = on_stderr,
    on_exit = on_exit,
  })
  if not ok or job <= 0 then
    return nil, ('sightline: could not start the core with %s'):format(python)
  end
  S.chan = job
  for id, status in pairs(S.statuses) do
    S.statuses[id] = vim.tbl_extend('force', status, { state = 'starting' })
    S.statuses[id].seq = nil -- a new core numbers its statuses afresh
  end
  vim.rpcnotify(job, 'core.init', {
    config = config_for_core(),
    workspace = vim.fn.getcwd(-1, -1),
    conversation = S.conversations[1],
    config_dir = vim.fn.stdpath('config'), -- where the user's prompt files and skills are
  })
  -- The other panes' conversations come back in their panes too.
  for id, path in pairs(S.conversations) do
    if id ~= 1 then
      vim.rpcnotify(job, 'history.open', { path = path, pane = id })
    end
  end
  return job
end

---A request about this workspace (Neovim's global working directory), for the
---subcommands that list or change per-workspace state (:Sightline mcp, skills, ...).
---@param method string
---@param params table?
---@return table? result, string? err
function M.workspace_request(method, params)
  params = vim.tbl_extend('force', params or {}, { workspace = vim.fn.getcwd(-1, -1) })
  return M.request(method, params)
end

---Send a request; starts the core if needed.
---@param method string
---@param params table?
---@return table? result, string? err
function M.request(method, params)
  local chan, err = M.ensure()
  if not chan then
    return nil, err
  end
  -- The pane it comes from (the tab page's): its conversation. None for the first pane.
  local pane = pane_state().id()
  if pane ~= 1 and (params == nil or params.pane == nil) then
    params = vim.tbl_extend('force', params or {}, { pane = pane })
  end
  local ok, res = pcall(vim.rpcrequest, chan, method, params or vim.empty_dict())
  if not ok then
    return nil,
      require('sightline.diagnose').for_request(S.stderr, M.python(), root)
        or ('sightline: the core did not answer %s: %s'):format(method, tostring(res):gsub('^.-: ', ''))
  end
  if type(res) ~= 'table' or not res.ok then
    return nil, type(res) == 'table' and res.error or 'sightline: bad answer from the core'
  end
  if type(res.status) == 'table' then
    M.set_status(res.status)
  end
  return res
end

---Fire-and-forget, only if the core runs (never starts it).
---@param method string
---@param params table?
function M.notify(method, params)
  local pane = pane_state().id()
  if pane ~= 1 and (params == nil or params.pane == nil) and method ~= 'core.configure' then
    params = vim.tbl_extend('force', params or {}, { pane = pane })
  end
  if S.chan then
    vim.rpcnotify(S.chan, method, params or vim.empty_dict())
  end
end

---The last lines the core wrote to stderr (for :checkhealth and bug reports).
function M.stderr()
  return vim.deepcopy(S.stderr)
end

---Whether the core runs (never starts it).
---@return boolean
function M.running()
  return S.chan ~= nil
end

---The last status the core pushed (state, mode, provider, pending, …) of the active pane's
---conversation, or of pane `id`.
---@param id integer?
---@return table
function M.status(id)
  return mirror(id or pane_state().id())
end

---Every pane's status mirror, by pane.
---@return table<integer, table>
function M.statuses()
  return S.statuses
end

---Keep a status the core sent (pushed, or with an answer) unless an older one arrives after
---a newer one; the UI's receiver redraws what shows it.
---@param status table
function M.set_status(status)
  -- The core names the pane of any conversation but the first one's.
  local id = type(status.pane) == 'number' and status.pane or 1
  local old = mirror(id)
  -- A pushed update is built before a later request's answer but may be applied after it:
  -- the core numbers its statuses, and an older one never overwrites a newer one.
  if status.seq and old.seq and status.seq < old.seq then
    return
  end
  local before = old.state
  -- Most pushes of a stream carry the status unchanged (one a few milliseconds): nothing to
  -- redraw for those.
  local seq = status.seq
  status.seq = old.seq
  local same = S.chan ~= nil and vim.deep_equal(status, old)
  status.seq = seq
  S.statuses[id] = status
  if status.conversation_path ~= nil then
    S.conversations[id] = status.conversation_path ~= vim.NIL and status.conversation_path or nil
  end
  if not S.chan then
    status.state = 'stopped'
  end
  if not same then
    pane_state().with(id, require('sightline.ui.receive').status, status, before)
  end
end

---Stop the core (no message). With `wait_ms`, wait at most that long for it to exit.
---@param wait_ms integer?
function M.shutdown(wait_ms)
  local job = S.chan
  if not job then
    return
  end
  S.expected[job] = true
  S.chan = nil
  forget_core_state()
  for id in pairs(S.statuses) do
    S.statuses[id] = stopped_status(id)
  end
  local pid_ok, pid = pcall(vim.fn.jobpid, job)
  pcall(vim.fn.jobstop, job)
  if wait_ms then
    -- jobstop sends SIGTERM (a decision waiting in the core does not delay it); bounded.
    local ok, res = pcall(vim.fn.jobwait, { job }, wait_ms)
    if (not ok or res[1] == -1) and pid_ok then
      pcall(vim.uv.kill, pid, 'sigkill')
      pcall(vim.fn.jobwait, { job }, 100)
    end
  end
end

---Restart: a new core reloads the current conversation from history. The old core is gone
---first (bounded wait): it holds the conversation's lock while it lives.
function M.restart()
  M.shutdown(STOP_WAIT_MS)
  return M.ensure()
end

---Reconfigure a running core after setup().
function M.configure()
  M.notify('core.configure', { config = config_for_core() })
end

return M
