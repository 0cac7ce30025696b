---@mod sightline.ui.pane.transcript  Apply the core's transcript deltas: rows, highlights, folds, Markdown, chips.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local layout = require('sightline.ui.pane.layout')
local folds = require('sightline.ui.pane.folds')
local cuts = require('sightline.ui.pane.cuts')
local markdown = require('sightline.ui.pane.markdown')
local notice = require('sightline.ui.pane.notice')
local S = state.S

local ns = api.nvim_create_namespace('sightline.transcript')

-- Neovim does not update 'foldexpr' folds while Insert mode is on (the composer's usual
-- state while a reply streams), so a fold a delta brings in Insert mode (thinking, command
-- output) is computed when Insert mode ends: see the ModeChanged autocommand. Replacing the
-- rows through `:normal` instead froze a Neovim without a UI.
---@return boolean kept row `start` kept its text, the delta's first row appended to it
local function set_rows(buf, start, lines, folds_changed)
  if folds_changed and api.nvim_get_mode().mode:match('^[iR]') then
    S.folds_stale = true -- recomputed when Insert mode ends: O(lines), ~3 ms per 1 000
  end
  -- A streamed reply's delta mostly rewrites its last row with more text: appended to that
  -- row instead, the row's marks stay where they are (its Markdown among them, rendered
  -- again a frame later at most; see markdown.lua).
  if start == api.nvim_buf_line_count(buf) - 1 and #lines > 0 then
    local old = api.nvim_buf_get_lines(buf, start, start + 1, false)[1]
    if #old > 0 and lines[1]:sub(1, #old) == old then
      local added = { lines[1]:sub(#old + 1), unpack(lines, 2) }
      api.nvim_buf_set_text(buf, start, #old, start, #old, added)
      return true
    end
  end
  api.nvim_buf_set_lines(buf, start, -1, false, lines)
  return false
end

---A delta was lost (the core restarted mid-update): ask for the whole transcript, once,
---after the push that found it. The push is the core calling Neovim, and no Lua function
---the core calls ever calls the core (DESIGN.md): a request from inside it could wait on a
---core that waits on Neovim.
local function resync()
  S.resync = true
  vim.schedule(state.bind(function()
    local host = require('sightline.host')
    local res = host.running() and host.request('transcript.full') or nil
    S.resync = false
    if res and res.transcript then
      M.apply(res.transcript)
    end
  end))
end

---While the transcript window follows a reply that grows, its scrolls fire no WinScrolled:
---each push scrolls it a row, and every handler would run for each one, matchparen's among
---them (in the window the user types in: ~40 ms of Neovim's CPU for a long reply). The
---window's own 'eventignorewin' comes back once it stops following or the turn ends.
---@param on boolean
function M.quiet_scrolls(on)
  local win = state.valid_win(S.twin) and S.twin or nil
  if on and win and S.quiet_win == win then
    return
  end
  if S.quiet_win and state.valid_win(S.quiet_win) then
    api.nvim_set_option_value('eventignorewin', S.quiet_eiw or '', { win = S.quiet_win })
  end
  S.quiet_win, S.quiet_eiw = nil, nil
  if on and win then
    local own = api.nvim_get_option_value('eventignorewin', { win = win })
    S.quiet_win, S.quiet_eiw = win, own
    local quiet = own == '' and 'WinScrolled' or own .. ',WinScrolled'
    api.nvim_set_option_value('eventignorewin', quiet, { win = win })
  end
end

---Apply a delta computed by the core: replace rows from `start`, repaint their highlights.
---@param delta table {start, lines, highlights, folds, …} rows from `start` (0-based)
function M.apply(delta)
  layout.ensure_buffers()
  local buf = S.tbuf
  local count = api.nvim_buf_line_count(buf)
  if S.resync then
    return -- the whole transcript is asked for: it holds this delta too
  end
  if delta.start > count then
    resync()
    return
  end
  local follow = state.valid_win(S.twin) and api.nvim_win_get_cursor(S.twin)[1] >= count
  local folds_changed = folds.apply(delta.start, delta.folds)
  cuts.apply(delta.start, delta.cuts)
  vim.bo[buf].modifiable = true
  local lines = delta.lines
  if delta.start == 0 and #lines == 0 then
    lines = { '' }
  end
  local kept = set_rows(buf, delta.start, lines, folds_changed)
  vim.bo[buf].modifiable = false
  api.nvim_buf_clear_namespace(buf, ns, delta.start, -1)
  for _, h in ipairs(delta.hls or {}) do
    local row, col, end_col, group = h[1], h[2], h[3], h[4]
    if end_col < 0 then
      api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = group })
    else
      api.nvim_buf_set_extmark(buf, ns, row, col, { end_col = end_col, hl_group = group })
    end
  end
  markdown.take(buf, delta.start, delta.md, kept)
  require('sightline.ui.chips').apply(buf, delta.start, delta.chips)
  notice.render()
  require('sightline.ui.pane.steer').redraw() -- the queued messages stay under the last line
  if S.help then
    require('sightline.ui.pane.help').redraw() -- and the key list under them
  end
  if follow ~= (S.quiet_win ~= nil and S.quiet_win == S.twin) then
    M.quiet_scrolls(follow)
  end
  if follow then
    local last = api.nvim_buf_line_count(buf)
    local at = api.nvim_win_get_cursor(S.twin)
    if at[1] ~= last or at[2] ~= 0 then -- most deltas append to the row it is on already
      api.nvim_win_set_cursor(S.twin, { last, 0 })
    end
    if delta.start == 0 then
      -- A whole transcript (opened, reopened after a restart) fills the window from the
      -- end: the view of the longer text it replaced would hide its top behind blank rows.
      local top = math.max(1, last - api.nvim_win_get_height(S.twin) + 1)
      api.nvim_win_call(S.twin, function()
        vim.fn.winrestview({ topline = top })
      end)
    end
  end
  markdown.render_visible(buf)
end

return M
