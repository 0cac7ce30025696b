---@mod sightline.chips  Code references in the transcript: paint, track, navigate on <CR>.
local M = {}
local api = vim.api

local ns = api.nvim_create_namespace('sightline.chip')
local track_ns = api.nvim_create_namespace('sightline.chip_target')
local targets = {} ---@type table<integer, table> transcript extmark id → target

---Mark the chips of a delta in the transcript buffer (rows from `start` were just replaced).
function M.apply(buf, start, chips)
  for id in pairs(targets) do
    local pos = api.nvim_buf_get_extmark_by_id(buf, ns, id, {})
    if not pos[1] or pos[1] >= start then
      targets[id] = nil
    end
  end
  api.nvim_buf_clear_namespace(buf, ns, start, -1)
  for _, c in ipairs(chips or {}) do
    local ok, id = pcall(api.nvim_buf_set_extmark, buf, ns, c.row, c.col, { end_col = c.end_col, hl_group = 'SightlineChip' })
    if ok then
      targets[id] = M.track(c.target)
    end
  end
end

---A selection's chip follows later edits: an extmark in its own buffer carries the range.
function M.track(target)
  local b = target.buffer
  if type(b) == 'number' and api.nvim_buf_is_valid(b) and not target.mark then
    local ok, mark = pcall(api.nvim_buf_set_extmark, b, track_ns, target.start_row, target.start_col,
      { end_row = target.end_row, end_col = target.end_col, right_gravity = false, end_right_gravity = true })
    if ok then
      target.mark = mark
    end
  end
  return target
end

---The target as reveal/go_to_position arguments, following the tracked range if any.
function M.resolve(target)
  local opts = { file_path = target.file_path, start_line = target.start_line, end_line = target.end_line }
  local b = target.buffer
  if target.mark and api.nvim_buf_is_valid(b) then
    local pos = api.nvim_buf_get_extmark_by_id(b, track_ns, target.mark, { details = true })
    if pos[1] then
      opts.buffer = b
      opts.start_line, opts.end_line = pos[1] + 1, pos[3].end_row + 1
      local name = api.nvim_buf_get_name(b)
      if name ~= '' then
        opts.file_path = name
      end
    end
  end
  return opts
end

---The chip under the cursor in the transcript window (or the first on its line).
function M.at_cursor(buf, win)
  local row, col = unpack(api.nvim_win_get_cursor(win))
  local marks = api.nvim_buf_get_extmarks(buf, ns, { row - 1, 0 }, { row - 1, -1 }, { details = true })
  local first
  for _, m in ipairs(marks) do
    first = first or m
    if col >= m[3] and col < m[4].end_col then
      return targets[m[1]]
    end
  end
  return first and targets[first[1]]
end

---<CR>: `attachments.navigate` decides (reveal | select); <S-CR> and gs always select.
function M.navigate(how)
  local buf, win = api.nvim_get_current_buf(), api.nvim_get_current_win()
  local target = M.at_cursor(buf, win)
  if not target then
    return false
  end
  how = how or require('sightline.config').get().attachments.navigate
  local opts = M.resolve(target)
  local reveal = require('sightline.reveal')
  local res
  if how == 'select' then
    res = reveal.go_to_position({ file_path = opts.file_path, buffer = opts.buffer, line = opts.start_line,
      column = 1, end_line = opts.end_line })
  else
    res = reveal.reveal(opts)
  end
  if type(res) == 'string' and not vim.startswith(res, 'OK') then
    vim.notify('sightline: ' .. res, vim.log.levels.WARN)
  end
  return true
end

return M
