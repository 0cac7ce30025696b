---@mod sightline.ui.pane.cuts  Lines the core cut into rows (past 1000 bytes): kept from deltas, yanked whole.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local spans = require('sightline.ui.pane.spans')
local S = state.S

---Take a delta's cut spans.
---@param start integer the delta's first row (0-based)
---@param cuts integer[][]? the spans from `start` on: rows [first, end) of one line
function M.apply(start, cuts)
  spans.apply(S.cuts, start, cuts)
end

---The rows [first, end) of the line row `row` (0-based) belongs to.
---@param row integer
---@return integer first, integer stop
local function line_rows(row)
  local span = spans.find(S.cuts, row)
  if span then
    return span[1], span[2]
  end
  return row, row + 1
end

---Yank the whole line under the cursor, its rows joined, linewise, into the register given
---(as `yy` does: else the unnamed one and "0).
function M.yank()
  local win = api.nvim_get_current_win()
  if not (S.tbuf and api.nvim_win_get_buf(win) == S.tbuf) then
    require('sightline.ui.message').notify('sightline: the line to yank is in the transcript', vim.log.levels.WARN)
    return
  end
  local first, stop = line_rows(api.nvim_win_get_cursor(win)[1] - 1)
  local text = table.concat(api.nvim_buf_get_lines(S.tbuf, first, stop, false))
  local reg = vim.v.register
  vim.fn.setreg(reg, { text }, 'l')
  if reg == '"' then
    vim.fn.setreg('0', { text }, 'l')
  end
  local rows = stop - first
  api.nvim_echo({
    {
      ('sightline: yanked the line (%d bytes%s)'):format(#text, rows > 1 and (', %d rows'):format(rows) or ''),
    },
  }, false, {})
end

return M
