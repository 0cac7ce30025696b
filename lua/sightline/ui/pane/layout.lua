---@mod sightline.ui.pane.layout  The pane's buffers and windows: open, show, close, fit the terminal.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local keys = require('sightline.ui.pane.keys')
local composer = require('sightline.ui.pane.composer')
local markdown = require('sightline.ui.pane.markdown')
local bar = require('sightline.ui.pane.bar')
local notice = require('sightline.ui.pane.notice')
local S = state.S

-- The editor keeps at least this many columns beside the pane; the pane at least PANE_MIN.
M.MIN_EDITOR_WIDTH = 40
M.PANE_MIN_WIDTH = 20

local function scratch(name, role)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  vim.b[buf].sightline_role = role
  return buf
end

---The pane's number in its buffers' names, after the first pane's.
local function suffix()
  return S.id == state.MAIN and '' or ('/' .. S.id)
end

---Create the transcript and the composer when they do not exist (or were wiped out).
function M.ensure_buffers()
  if not state.valid_buf(S.tbuf) then
    S.tbuf = scratch('sightline://transcript' .. suffix(), 'transcript')
    vim.bo[S.tbuf].undolevels = -1
    -- Its own filetype: the transcript is rendered here (only what was written as Markdown
    -- is read as Markdown), so Markdown plugins must not re-render notes and diffs.
    vim.bo[S.tbuf].filetype = 'sightline'
    vim.bo[S.tbuf].modifiable = false
    S.folds, S.md_resume, S.md_pending, S.md_last, S.md_spans = {}, nil, {}, nil, {}
    keys.set(S.tbuf)
    markdown.register()
  end
  if not state.valid_buf(S.cbuf) then
    S.cbuf = scratch('sightline://composer' .. suffix(), 'composer')
    vim.bo[S.cbuf].filetype = 'markdown'
    keys.set(S.cbuf)
    pcall(function()
      require('sightline.complete').attach(S.cbuf)
    end)
    composer.register_hint()
  end
end

local function style(win, role, buf)
  vim.w[win].sightline_role = role
  -- Local to the pane's buffer in that window (`:setlocal`): a window split off the pane
  -- and given another buffer gets the user's options, not the pane's folds and bars.
  local wo = vim.wo[win][0]
  wo.number, wo.relativenumber, wo.signcolumn = false, false, 'no'
  wo.wrap, wo.linebreak, wo.foldenable = true, true, false
  wo.winfixwidth = true
  -- The pane's windows show the pane's buffers and nothing else: `:e file` there fails
  -- instead of putting a file where the composer's keys would type into it.
  wo.winfixbuf = true
  if buf == S.tbuf then
    wo.conceallevel, wo.concealcursor = 2, 'nc'
    -- A wrapped row goes on past the line's first column: a diff line's +/-/space column
    -- stays its own, so no wrapped row reads as a line of the diff.
    wo.breakindent, wo.breakindentopt = true, 'list:-1'
    vim.bo[buf].formatlistpat = '^[-+ ]'
    wo.foldenable, wo.foldmethod, wo.foldlevel = true, 'expr', 0
    -- The entry module's names (ui/pane/init.lua re-exports folds.lua's).
    wo.foldexpr = "v:lua.require'sightline.ui.pane'.foldexpr()"
    wo.foldtext = "v:lua.require'sightline.ui.pane'.foldtext()"
    wo.fillchars = 'fold: ,eob: '
  end
end

---A pane window: valid and still showing its buffer. A window the user turned to another
---buffer (with 'winfixbuf' off) is theirs now and never reused or closed as the pane's.
local function ours(win, buf)
  if not state.valid_win(win) then
    return false
  end
  if api.nvim_win_get_buf(win) ~= buf then
    vim.w[win].sightline_role = nil
    return false
  end
  return true
end

---@return boolean
function M.is_open()
  return ours(S.twin, S.tbuf) and ours(S.cwin, S.cbuf)
end

---The pane's width for the current terminal: the configured width, clamped so the editor
---keeps M.MIN_EDITOR_WIDTH columns (on a very narrow terminal the two share it).
---@return integer
function M.width()
  local cfg = require('sightline.config').get().pane
  local cols = vim.o.columns
  local want = cfg.width < 1 and math.floor(cols * cfg.width) or math.floor(cfg.width)
  local max = cols - M.MIN_EDITOR_WIDTH - 1 -- one column for the separator
  local min = math.min(M.PANE_MIN_WIDTH, math.floor(cols / 2))
  return math.max(min, math.min(want, max))
end

local function composer_height()
  return math.max(2, math.min(6, math.floor(vim.o.lines / 5)))
end

---Fit the open pane to the terminal (called on VimResized).
function M.resize()
  if M.is_open() then
    pcall(api.nvim_win_set_width, S.twin, M.width())
    pcall(api.nvim_win_set_height, S.cwin, composer_height())
    notice.render()
    bar.render()
  end
end

local function open_windows()
  M.close()
  local cfg = require('sightline.config').get().pane
  S.twin = api.nvim_open_win(S.tbuf, false, { split = cfg.side, win = -1, width = M.width() })
  S.cwin = api.nvim_open_win(S.cbuf, false, { split = 'below', win = S.twin, height = composer_height() })
  style(S.twin, 'pane', S.tbuf)
  style(S.cwin, 'pane', S.cbuf)
  vim.wo[S.cwin][0].winfixheight = true
  bar.on_state(require('sightline.host').status())
  local last = api.nvim_buf_line_count(S.tbuf)
  api.nvim_win_set_cursor(S.twin, { last, 0 })
  notice.render()
end

---Make the current tab page's pane the active one, choosing it when the tab has none: the
---active pane when no other tab shows it, else a pane no tab shows, else a new one (a new
---conversation). A user who never opens a second tab's pane always gets the first pane.
---@return integer id
function M.claim()
  local id = state.of_tab()
  if not id then
    id = state.id()
    if state.tab_of(id) then
      id = nil
      for _, other in ipairs(state.ids()) do
        if not state.tab_of(other) then
          id = other
          break
        end
      end
      id = id or state.new_id()
    end
  end
  state.use(id)
  return id
end

---Bring the pane into view without taking the focus (the current window and mode stay).
function M.show()
  M.ensure_buffers()
  if not M.is_open() then
    open_windows()
  end
end

---Open the tab page's pane (or focus it) with the composer ready for typing.
function M.open()
  M.claim()
  M.ensure_buffers()
  if not M.is_open() then
    open_windows()
  end
  api.nvim_set_current_win(S.cwin)
  vim.cmd.startinsert({ bang = true })
end

---Hide the pane; the transcript stays and shows again on reopen.
function M.close()
  for _, pair in ipairs({ { S.cwin, S.cbuf }, { S.twin, S.tbuf } }) do
    if ours(pair[1], pair[2]) and #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, pair[1], true)
    end
  end
  S.twin, S.cwin = nil, nil
end

---Open the tab page's pane, or close it when it is open.
function M.toggle()
  if state.of_tab() then
    state.use(state.of_tab())
  end
  if state.of_tab() and M.is_open() then
    M.close()
  else
    M.open()
  end
end

---The transcript buffer (created if needed), for tests and integrations.
---@return {transcript: integer, composer: integer}
function M.buffers()
  M.ensure_buffers()
  return { transcript = S.tbuf, composer = S.cbuf }
end

return M
