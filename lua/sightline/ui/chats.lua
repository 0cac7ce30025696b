---@mod sightline.ui.chats  :Sightline chats: the conversations open at once (one a tab page's pane), and switching.
---The core keeps one conversation per pane (python/sightline/core.py); this lists them with
---their state through vim.ui.select (any picker) and goes to the one picked.
local M = {}
local api = vim.api

local function state()
  return require('sightline.ui.pane.state')
end

local STATES = {
  idle = 'idle',
  working = 'working',
  awaiting_decision = 'waiting for a decision',
  starting = 'starting',
  stopped = 'stopped',
}

---@class sightline.Chat
---@field pane integer
---@field state string
---@field title string
---@field provider string?
---@field model string?
---@field turns integer?

---The open conversations: the core's, and the panes it has not heard of yet.
---@return sightline.Chat[]? chats, string? err
function M.list()
  local res, err = require('sightline.host').request('chats.list')
  if not res then
    return nil, err
  end
  local out, seen = {}, {}
  for _, c in ipairs(res.chats or {}) do
    -- A conversation the core made for a pane this Neovim never showed is not listed.
    if c.pane == state().MAIN or vim.tbl_contains(state().ids(), c.pane) then
      seen[c.pane] = true
      table.insert(out, c)
    end
  end
  for _, id in ipairs(state().ids()) do
    if not seen[id] then
      table.insert(out, { pane = id, state = 'idle', title = '' })
    end
  end
  table.sort(out, function(a, b)
    return a.pane < b.pane
  end)
  return out
end

---@param c sightline.Chat
---@return string
function M.label(c)
  local tab = state().tab_of(c.pane)
  local where = tab and ('tab %d'):format(api.nvim_tabpage_get_number(tab)) or 'hidden'
  local title = (type(c.title) == 'string' and c.title ~= '') and c.title or '(new conversation)'
  local facts = { STATES[c.state] or tostring(c.state) }
  if type(c.provider) == 'string' and c.provider ~= '' then
    table.insert(facts, c.provider)
  end
  if type(c.turns) == 'number' and c.turns > 0 then
    table.insert(facts, c.turns == 1 and '1 turn' or ('%d turns'):format(c.turns))
  end
  local here = c.pane == state().of_tab() and '  · this tab' or ''
  return ('%s  %s  (%s)%s'):format(where, title, table.concat(facts, ' · '), here)
end

---Go to pane `id`: its tab page when one shows it, else it opens in this tab (a new tab
---when this one shows another pane); the composer is ready for typing.
---@param id integer
---@return boolean? ok, string? err
function M.switch(id)
  if type(id) ~= 'number' or not vim.tbl_contains(state().ids(), id) then
    return nil, ('sightline: chats: no conversation %s is open'):format(tostring(id))
  end
  local tab = state().tab_of(id)
  if tab then
    if tab ~= api.nvim_get_current_tabpage() then
      api.nvim_set_current_tabpage(tab) -- TabEnter makes its pane the active one
    end
  elseif state().of_tab() then
    vim.cmd.tabnew()
  end
  state().use(id)
  require('sightline.ui.pane').open()
  return true
end

---:Sightline chats: pick one of the open conversations and go to it.
---@return boolean? ok, string? err
function M.pick()
  local chats, err = M.list()
  if not chats then
    return nil, err
  end
  vim.ui.select(chats, { prompt = 'sightline chats', format_item = M.label, kind = 'sightline.chats' }, function(c)
    if c then
      local ok, why = M.switch(c.pane)
      if not ok and why then
        require('sightline.ui.message').notify(why, vim.log.levels.WARN)
      end
    end
  end)
  return true
end

return M
