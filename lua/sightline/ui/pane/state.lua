---@mod sightline.ui.pane.state  What the pane's modules share: its buffers, windows and spans.
---
--- Each tab page may hold its own pane, each with its own conversation in the core (the
--- core's sessions are keyed by the pane's number, python/sightline/core.py). `S` is the
--- state of the active pane: the current tab page's, or the last one used when that tab
--- holds none (so a user who never opens a second pane always has pane 1). What the core
--- pushes for a pane, and what a timer or a deferred step does, runs with that pane active
--- (`with`, `bind`); the modules beside this one read and write `S` alone.
local M = {}
local api = vim.api

M.MAIN = 1

---A pane's state as it starts.
---@param id integer
---@return table
local function fresh(id)
  return {
    id = id,
    tbuf = nil, ---@type integer?
    cbuf = nil, ---@type integer?
    twin = nil, ---@type integer?
    cwin = nil, ---@type integer?
    timer = nil, ---@type uv.uv_timer_t?
    since = nil, ---@type integer?
    frame = 1,
    prompts = {}, ---@type string[] prompts sent from the composer, oldest first
    prompt_index = nil, ---@type integer?
    draft = nil, ---@type string[]? the unsent text <Up> stepped away from, restored on <Down>
    editing = nil, ---@type integer? the record of the earlier message the composer's text replaces
    queued = {}, ---@type {id: integer, text: string, steer: boolean}[] messages waiting for the turn to end
    notice = nil, ---@type {text: string, level: integer, expires: boolean?}? the last message the pane shows
    folds = {}, ---@type integer[][] fold spans [first, end) as the core sent them, sorted
    folds_stale = false, -- a delta changed the folds in Insert mode: recomputed when it ends
    cuts = {}, ---@type integer[][] rows [first, end) of each line cut into rows, sorted
    resync = false, -- a delta was lost: the whole transcript is asked for (transcript.lua)
    md_resume = nil, ---@type {first: integer, row: integer}? where the last Markdown span re-parses
    -- Markdown spans no window has shown yet, sorted, as {from, end, first}: rendered when a
    -- window first draws them (a reopened long conversation renders only what is in view).
    md_pending = {}, ---@type integer[][]
    md_last = nil, ---@type integer? the first row of the transcript's last Markdown span
    md_spans = {}, ---@type integer[][] every Markdown span as the core sent it, {first, end}, sorted
    help = false, -- the key list (g?) shows under the transcript
    md_streamed_at = nil, ---@type integer? when the streamed span was last rendered (markdown.lua)
    md_render_due = false, -- a timer renders the streamed span (markdown.lua)
    md_prefetching = false, -- a prefetch step is scheduled (markdown.lua)
    md_painting = false, -- the streamed span is parsed, its paint scheduled (markdown.lua)
    quiet_win = nil, ---@type integer? the transcript window whose scrolls fire no WinScrolled
    quiet_eiw = nil, ---@type string? its own 'eventignorewin', given back (transcript.lua)
  }
end

local panes = { [M.MAIN] = fresh(M.MAIN) } ---@type table<integer, table>
local current = panes[M.MAIN]
local last_id = M.MAIN

M.S = setmetatable({}, {
  __index = function(_, k)
    return current[k]
  end,
  __newindex = function(_, k, v)
    current[k] = v
  end,
})

---@param b integer?
---@return boolean?
function M.valid_buf(b)
  return b and api.nvim_buf_is_valid(b)
end

---@param w integer?
---@return boolean?
function M.valid_win(w)
  return w and api.nvim_win_is_valid(w)
end

---The active pane's number.
---@return integer
function M.id()
  return current.id
end

---The state of pane `id` (made when it is new).
---@param id integer
---@return table
function M.get(id)
  local p = panes[id]
  if not p then
    p = fresh(id)
    panes[id] = p
    last_id = math.max(last_id, id)
  end
  return p
end

---Every pane's number, in order.
---@return integer[]
function M.ids()
  local out = vim.tbl_keys(panes)
  table.sort(out)
  return out
end

---A number no pane has had.
---@return integer
function M.new_id()
  return last_id + 1
end

---Make pane `id` the active one (its tab page was entered, or it was opened).
---@param id integer
function M.use(id)
  current = M.get(id)
end

---Run `fn(...)` with pane `id` active, then the one before again.
---@param id integer
---@param fn function
---@param ... any its arguments
function M.with(id, fn, ...)
  if current.id == id then
    return fn(...)
  end
  local before = current
  current = M.get(id)
  local res = { pcall(fn, ...) }
  current = before
  if not res[1] then
    error(res[2], 0)
  end
  return unpack(res, 2, table.maxn(res))
end

---`fn` as a callback that runs with the pane active now (a timer's, a deferred step's).
---@param fn function
---@return function
function M.bind(fn)
  local id = current.id
  return function(...)
    return M.with(id, fn, ...)
  end
end

---Whether pane `p` shows in a window of tab page `tab`.
---@param p table
---@param tab integer
local function shown_in(p, tab)
  local win = p.twin
  return M.valid_win(win) and api.nvim_win_get_buf(win) == p.tbuf and api.nvim_win_get_tabpage(win) == tab
end

---The pane that tab page `tab` (default: the current one) shows, if any.
---@param tab integer?
---@return integer?
function M.of_tab(tab)
  tab = tab or api.nvim_get_current_tabpage()
  if shown_in(current, tab) then
    return current.id
  end
  for id, p in pairs(panes) do
    if shown_in(p, tab) then
      return id
    end
  end
  return nil
end

---The tab page that shows pane `id`, if one does.
---@param id integer
---@return integer?
function M.tab_of(id)
  local p = panes[id]
  if p and M.valid_win(p.twin) and api.nvim_win_get_buf(p.twin) == p.tbuf then
    return api.nvim_win_get_tabpage(p.twin)
  end
  return nil
end

---The pane whose transcript or composer is buffer `buf`, if any.
---@param buf integer
---@return integer?
function M.of_buf(buf)
  for id, p in pairs(panes) do
    if p.tbuf == buf or p.cbuf == buf then
      return id
    end
  end
  return nil
end

---Forget pane `id` (its tab page closed; never the first pane).
---@param id integer
function M.forget(id)
  if id ~= M.MAIN then
    if current.id == id then
      current = panes[M.MAIN]
    end
    panes[id] = nil
  end
end

return M
