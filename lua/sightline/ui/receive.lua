---@mod sightline.ui.receive  What the core tells the UI, in one place: pushed updates, status changes, its exit.
---
--- Pushes arrive through port.lua `notify_ui` (an RPC notification: the core waits for no
--- answer); a status also comes with each answer of host.request, and the host reports a core
--- that ended on its own. Everything here draws or fires events and never calls the core:
--- the pane asks for the whole transcript after a lost delta only once the push returned.
local M = {}

local function state()
  return require('sightline.ui.pane.state')
end

---Whether a pane other than the active one runs a turn held to a selection.
local function other_scoped()
  local here = state().id()
  for id, status in pairs(require('sightline.host').statuses()) do
    if id ~= here and type(status.scope) == 'table' then
      return true
    end
  end
  return false
end

---Apply one batched update (the part of M.update that may fail).
local function apply(payload)
  if payload.transcript then
    require('sightline.ui.pane').apply(payload.transcript)
  end
  if payload.status then
    require('sightline.host').set_status(payload.status)
  end
  if payload.composer then
    require('sightline.ui.pane.steer').restore(payload.composer)
  end
  if payload.slash then
    require('sightline.complete').commands_changed()
  end
  for _, ev in ipairs(payload.events or {}) do
    if ev.name == 'SightlineTurnEnd' then
      -- This pane's turn ended: what it drew and watched goes, another pane's stays.
      if not other_scoped() then
        require('sightline.port.scope').unwatch_all()
      end
      local inline = package.loaded['sightline.ui.inline']
      if inline then
        inline.clear_pane(state().id())
      end
    end
    vim.api.nvim_exec_autocmds('User', { pattern = ev.name, data = ev.data, modeline = false })
  end
end

---A batched push from the core: transcript delta, status, events.
---@param payload table {transcript?, status?, events?}
function M.update(payload)
  -- Called as an RPC notification, whose errors Neovim would swallow: report them. Drawn
  -- in the pane of the conversation it is about (its status names any but the first).
  local pane = type(payload.status) == 'table' and payload.status.pane or nil
  local ok, err = xpcall(state().with, debug.traceback, type(pane) == 'number' and pane or 1, apply, payload)
  if not ok then
    require('sightline.ui.message').notify(
      'sightline: failed to apply an update from the core: ' .. tostring(err),
      vim.log.levels.ERROR
    )
  end
end

---The host's mirror of the core's status changed (a push or an answer): redraw what shows it.
---@param status table the new status
---@param before string? the state before
function M.status(status, before)
  require('sightline.ui.pane').on_state(status, before)
  -- Any pane's waiting edit guards the quit, not only the active pane's.
  local guarded = status
  for _, other in pairs(require('sightline.host').statuses()) do
    if other.state == 'awaiting_decision' and (other.pending_kind == 'edit' or other.pending_kind == 'create') then
      guarded = other
    end
  end
  require('sightline.ui.quitguard').update(guarded)
end

---What the Lua side drew or watched for the core that asked: gone with that core, however
---it ended (a crash, a restart, a shutdown), so no stale marks or keys remain.
function M.core_gone()
  local guard = package.loaded['sightline.ui.quitguard']
  if guard then
    guard.clear()
  end
  local inline = package.loaded['sightline.ui.inline']
  if inline then
    inline.clear()
  end
  local scope = package.loaded['sightline.port.scope']
  if scope then
    scope.unwatch_all()
  end
end

---The core ended on its own (the host already said so with vim.notify): the pane shows it
---and the turn it ran, if any, ends for the listeners.
---@param msg string? what the host reported
function M.core_exit(msg)
  local pane = require('sightline.ui.pane')
  for _, id in ipairs(state().ids()) do
    state().with(id, pane.on_core_exit, msg)
  end
  vim.api.nvim_exec_autocmds('User', { pattern = 'SightlineTurnEnd', data = { status = 'crashed' }, modeline = false })
end

return M
