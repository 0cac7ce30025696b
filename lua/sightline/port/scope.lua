---@mod sightline.port.scope  Ranges inside Neovim: check a selection, re-anchor it, replace it.
---The core decides; these run here so a large buffer never crosses RPC on the hot path.
local M = {}
local api = vim.api

---@class sightline.Range
---@field buffer integer
---@field start_row integer 0-based
---@field start_col integer byte column
---@field end_row integer 0-based, inclusive row of the exclusive end position
---@field end_col integer byte column, exclusive

local function int(v)
  return type(v) == 'number' and v == math.floor(v)
end

---Validate a flat range against its buffer. Refused, never clamped.
---@param r table a flat range (buffer, start_row, start_col, end_row, end_col)
---@return sightline.Range? range, string? err
function M.check(r)
  for _, k in ipairs({ 'buffer', 'start_row', 'start_col', 'end_row', 'end_col' }) do
    if not int(r[k]) then
      return nil, ('%s must be an integer, got %s'):format(k, vim.inspect(r[k]))
    end
  end
  local buf = r.buffer == 0 and api.nvim_get_current_buf() or r.buffer
  if not api.nvim_buf_is_valid(buf) then
    return nil, ('buffer %d does not exist'):format(r.buffer)
  end
  if not api.nvim_buf_is_loaded(buf) then
    return nil, ('buffer %d is not loaded'):format(buf)
  end
  local count = api.nvim_buf_line_count(buf)
  for _, k in ipairs({ 'start', 'end' }) do
    local row, col = r[k .. '_row'], r[k .. '_col']
    if row < 0 or row >= count then
      return nil, ('%s_row %d is outside the buffer (rows 0..%d)'):format(k, row, count - 1)
    end
    local line = api.nvim_buf_get_lines(buf, row, row + 1, true)[1]
    if col < 0 or col > #line then
      return nil, ('%s_col %d is outside row %d (columns 0..%d)'):format(k, col, row, #line)
    end
    if col < #line and vim.str_utf_start(line, col + 1) ~= 0 then
      return nil, ('%s_col %d is inside a multibyte character of row %d'):format(k, col, row)
    end
  end
  if r.end_row < r.start_row or (r.end_row == r.start_row and r.end_col < r.start_col) then
    return nil, 'the range ends before it starts'
  end
  if r.end_row == r.start_row and r.end_col == r.start_col then
    return nil, 'the selection is empty'
  end
  return { buffer = buf, start_row = r.start_row, start_col = r.start_col, end_row = r.end_row, end_col = r.end_col }
end

local function text_of(range)
  return table.concat(
    api.nvim_buf_get_text(range.buffer, range.start_row, range.start_col, range.end_row, range.end_col, {}),
    '\n'
  )
end

---How a buffer is named to the model and the user: relative to the workspace root (the
---global working directory, as the core's workspace), else its full path; a buffer without a
---file is `[No Name] (buffer N)`.
---@param buf integer
---@return string
function M.name(buf)
  local path = api.nvim_buf_get_name(buf)
  if path == '' or vim.bo[buf].buftype == 'nofile' then
    return ('[No Name] (buffer %d)'):format(buf)
  end
  return vim.fs.relpath(vim.fn.getcwd(-1, -1), path) or path
end

---The one title of a range, for the dialog and the transcript: `src/app.py:12–30`, or for a
---buffer without a file `[No Name] 1:9–1:15`, from the first to the last selected character
---(byte columns, 1-based; a range ending at a line's start ends on the newline before it).
---@param range sightline.Range checked
---@return string
function M.title(range)
  local buf, s, e = range.buffer, range.start_row + 1, range.end_row + 1
  local name = M.name(buf)
  if not name:match('^%[No Name%]') then
    return ('%s:%s'):format(name, s == e and tostring(s) or ('%d–%d'):format(s, e))
  end
  local last_row, last_col = e, range.end_col
  if last_col == 0 and e > s then
    last_row = e - 1
    last_col = #api.nvim_buf_get_lines(buf, e - 2, e - 1, true)[1] + 1
  elseif last_col > 0 then
    local line = api.nvim_buf_get_lines(buf, e - 1, e, true)[1]
    last_col = last_col + vim.str_utf_start(line, last_col) -- the last character's first byte
  end
  return ('[No Name] %d:%d–%d:%d'):format(s, range.start_col + 1, last_row, math.max(last_col, 1))
end

---Everything the core needs to start a scoped turn: the checked range, the selected text and
---how to name the buffer and title the range. The core reads the text here; the request
---carried none.
---@param r table a flat range
---@return table? info, string? err
function M.describe(r)
  local range, err = M.check(r)
  if not range then
    return nil, err
  end
  local buf = range.buffer
  local why = require('sightline.port.buffers').unchangeable(buf)
  if why then
    return nil, ('buffer %d %s'):format(buf, why)
  end
  local text = text_of(range)
  if vim.trim(text) == '' then
    return nil, 'the selection is empty'
  end
  M.watch(buf)
  return {
    range = range,
    text = text,
    name = M.name(buf),
    title = M.title(range),
    path = api.nvim_buf_get_name(buf),
    filetype = vim.bo[buf].filetype,
    buftype = vim.bo[buf].buftype,
  }
end

-- While a scoped turn runs, its buffer's lines are mirrored here, kept current by on_lines,
-- so re-anchoring at accept scans Lua strings instead of copying a large buffer out of
-- Neovim (nvim_buf_get_lines of a 10 MB buffer alone takes ~50 ms).
local mirrors = {} ---@type table<integer, {lines: string[]}>

---Start mirroring a buffer (idempotent).
---@param buf integer
function M.watch(buf)
  if mirrors[buf] then
    return
  end
  local m = { lines = api.nvim_buf_get_lines(buf, 0, -1, true) }
  mirrors[buf] = m
  api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b, _, first, last, new_last)
      if mirrors[b] ~= m then
        return true -- detach
      end
      local new = api.nvim_buf_get_lines(b, first, new_last, true)
      local lines = m.lines
      local removed, added = last - first, #new
      if removed ~= added then
        local tail = #lines - last
        table.move(lines, last + 1, last + tail, first + added + 1)
        for i = first + added + tail + 1, #lines do
          lines[i] = nil
        end
      end
      for i = 1, added do
        lines[first + i] = new[i]
      end
    end,
    on_reload = function(_, b)
      if mirrors[b] == m then
        m.lines = api.nvim_buf_get_lines(b, 0, -1, true)
      end
    end,
    on_detach = function(_, b)
      if mirrors[b] == m then
        mirrors[b] = nil
      end
    end,
  })
end

---The mirrored lines of a buffer (for tests), or nil.
---@param buf integer
---@return string[]?
function M._mirror_lines(buf)
  return mirrors[buf] and mirrors[buf].lines
end

---Stop mirroring every buffer (the scoped turn ended).
function M.unwatch_all()
  mirrors = {}
end

---Re-anchor a selection: where it was if the range still holds `text`; else at the text's
---single occurrence in the buffer; else refused.
---@param r sightline.Range
---@param text string the selection's text when the turn started
---@return sightline.Range? range, string? err
function M.anchor(r, text)
  local buf = r.buffer
  if not api.nvim_buf_is_valid(buf) or not api.nvim_buf_is_loaded(buf) then
    return nil, 'gone'
  end
  local count = api.nvim_buf_line_count(buf)
  if r.end_row < count then
    local ok, held = pcall(api.nvim_buf_get_text, buf, r.start_row, r.start_col, r.end_row, r.end_col, {})
    if ok and table.concat(held, '\n') == text then
      return r
    end
  end
  local m = mirrors[buf]
  local unique = require('sightline.port.unique')
  local found, row, col = unique.find(m and m.lines or api.nvim_buf_get_lines(buf, 0, -1, true), text, 2)
  if not found or found == 0 or not row or not col then
    return nil, 'missing'
  end
  if found > 1 then
    return nil, 'ambiguous'
  end
  local end_row, end_col = unique.end_of(row, col, text)
  return { buffer = buf, start_row = row, start_col = col, end_row = end_row, end_col = end_col }
end

---Re-anchor and replace in one step: one undo step, then the save rule of every agent edit
---(review.begin/finish). Returns the range of the new text and how the save went.
---@param r sightline.Range
---@param old_text string the selection's text the model was shown
---@param new_text string
---@return {range: sightline.Range, applied: table}? result, string? err
function M.replace(r, old_text, new_text)
  local buffers = require('sightline.port.buffers')
  local buf, disk = buffers.fresh(r.buffer)
  if not buf then
    return nil, 'gone'
  end
  local why = buffers.unchangeable(buf)
  if why then
    return nil, 'unchangeable', why
  end
  local apply = require('sightline.port.apply')
  local state = apply.begin(buf, disk)
  local range, err = M.anchor(r, old_text)
  if not range then
    return nil, err
  end
  local lines = vim.split(new_text, '\n', { plain = true })
  apply.undo_break(buf)
  api.nvim_buf_set_text(buf, range.start_row, range.start_col, range.end_row, range.end_col, lines)
  local end_row = range.start_row + #lines - 1
  local end_col = #lines == 1 and range.start_col + #lines[1] or #lines[#lines]
  return {
    range = {
      buffer = buf,
      start_row = range.start_row,
      start_col = range.start_col,
      end_row = end_row,
      end_col = end_col,
    },
    applied = apply.finish(buf, state),
  }
end

return M
