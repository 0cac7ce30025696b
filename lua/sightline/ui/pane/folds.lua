---@mod sightline.ui.pane.folds  The transcript's folds: the spans the core marked, and how they show.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local span_list = require('sightline.ui.pane.spans')
local S = state.S

-- Folds and the current reply's Markdown are updated from the delta's first row on, never
-- over the whole transcript: a streamed delta costs the same at 100 rows and at 100 000.

---Take a delta's fold spans.
---@param start integer the delta's first row (0-based)
---@param folds integer[][]? the spans from `start` on
---@return boolean changed whether a span was dropped or added
function M.apply(start, folds)
  return span_list.apply(S.folds, start, folds)
end

---The transcript's fold expression: rows the core marked (long command output, thinking).
---@return string
function M.expr()
  local folds = S.folds
  local buf = api.nvim_get_current_buf() -- the window's whose folds are computed
  if buf ~= S.tbuf then -- another pane's transcript (each tab page may show one)
    local id = state.of_buf(buf)
    folds = id and state.get(id).folds or {}
  end
  return span_list.find(folds, vim.v.lnum - 1) and '1' or '0'
end

---'foldtext' of the transcript: a fold's header and how many lines it hides.
---@return string
function M.text()
  local n = vim.v.foldend - vim.v.foldstart + 1
  local first = vim.fn.getline(vim.v.foldstart)
  if vim.startswith(first, '∴') then -- the model's thinking, folded from its header on
    return ('%s  ▸ %d %s (zo shows them)'):format(first, n - 1, n - 1 == 1 and 'line' or 'lines')
  end
  if vim.startswith(first, '▸ sent as') then -- what a `/` prompt file expanded to
    return ('%s: %d %s (zo shows them)'):format(first, n - 1, n - 1 == 1 and 'line' or 'lines')
  end
  return ('  ▸ %d more %s of output (zo shows them)'):format(n, n == 1 and 'line' or 'lines')
end

---Keep the end of the transcript in view in a window that followed it: when folds close
---above it, Neovim keeps the topline, and the window would show the footer and blank rows
---with the reply above them, out of view.
---@param win integer
local function follow_end(win)
  api.nvim_win_call(win, function()
    vim.cmd('normal! zb') -- the last line at the bottom, as much as fits above it
  end)
end

---Compute the transcript's folds again in every window showing it (after Insert mode):
---setting 'foldmethod' recomputes them, keeps the state of folds the user opened or
---closed, and closes new ones as 'foldlevel' says.
function M.refresh()
  S.folds_stale = false
  if not state.valid_buf(S.tbuf) then
    return
  end
  local last = api.nvim_buf_line_count(S.tbuf)
  for _, win in ipairs(vim.fn.win_findbuf(S.tbuf)) do
    local following = api.nvim_win_get_cursor(win)[1] >= last
    vim.wo[win][0].foldmethod = 'expr'
    if following then
      follow_end(win)
    end
  end
end

---The row after the last one a window whose first row is `top` can show: one screen row
---per line at least, a fold span counted as one row even when open (more is only rendered
---early, never missed).
---@param win integer
---@param top integer the window's first row (0-based)
---@return integer
function M.view_end(win, top)
  local count = api.nvim_buf_line_count(api.nvim_win_get_buf(win))
  local height = api.nvim_win_get_height(win)
  -- The first fold span ending after `top` (bisection), then the spans in order.
  local spans = S.folds
  local lo, hi = 1, #spans + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if spans[mid][2] <= top then
      lo = mid + 1
    else
      hi = mid
    end
  end
  local row, rows, i = top, 0, lo
  while rows < height and row < count do
    local span = spans[i]
    if span and row >= span[1] then
      row, i = span[2], i + 1
    else
      row = row + 1
    end
    rows = rows + 1
  end
  return row
end

return M
