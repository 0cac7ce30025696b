---@mod sightline.ui.paste  :Sightline paste and the composer's paste key: the clipboard's image
---as an `@image:` mention in the composer, its chip (worded by the core) beside it.
local M = {}
local api = vim.api

local ns = api.nvim_create_namespace('sightline.paste')

---Insert `token` at the composer's cursor when the composer is where the user is, else at
---the end of its text; returns the row it went to.
---@param buf integer the composer buffer
---@param token string
---@param chip string
---@return integer row 0-based
local function insert(buf, token, chip)
  local win = api.nvim_get_current_win()
  local row, col
  if api.nvim_win_get_buf(win) == buf then
    row, col = unpack(api.nvim_win_get_cursor(win))
    row = row - 1
    local mode = api.nvim_get_mode().mode
    local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
    if mode ~= 'i' and #line > 0 then
      col = math.min(#line, col + 1) -- Normal mode puts it after the cursor, as `p` does
    end
  else
    row = api.nvim_buf_line_count(buf) - 1
    col = #(api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or '')
  end
  local line = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
  local before = line:sub(1, col)
  local text = ((before ~= '' and not before:find('%s$')) and ' ' or '') .. token .. ' '
  api.nvim_buf_set_text(buf, row, col, row, col, { text })
  if api.nvim_win_get_buf(win) == buf then
    api.nvim_win_set_cursor(win, { row + 1, col + #text })
  end
  local start = col + #text - #token - 1
  -- The chip goes with the mention: deleting the mention hides it (invalidate).
  api.nvim_buf_set_extmark(buf, ns, row, start, {
    end_col = start + #token,
    virt_text = { { ' ' .. chip, 'SightlineNote' } },
    virt_text_pos = 'eol',
    invalidate = true,
    undo_restore = false,
  })
  return row
end

---The clipboard's image into the composer (the pane opens if it is closed).
---@return boolean? ok, string? err
function M.paste()
  local res, err = require('sightline.host').request('images.paste')
  if not res then
    return nil, err
  end
  local pane = require('sightline.ui.pane')
  local S = require('sightline.ui.pane.state').S
  if not (S.cbuf and api.nvim_buf_is_valid(S.cbuf)) then
    pane.open()
  end
  local buf = S.cbuf
  if not (buf and api.nvim_buf_is_valid(buf)) then
    return nil, 'sightline: the pane could not open'
  end
  insert(buf, res.token, res.chip)
  return true
end

---The paste key and <Plug>(sightline-paste): a refusal is shown, never thrown.
function M.key()
  local ok, err = M.paste()
  if not ok and err then
    require('sightline.ui.message').notify(err, vim.log.levels.WARN)
  end
end

---The chips shown in the composer (for tests and :checkhealth-like looks).
---@param buf integer
---@return string[]
function M.chips(buf)
  local out = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local d = m[4]
    if not d.invalid and d.virt_text then
      table.insert(out, vim.trim(d.virt_text[1][1]))
    end
  end
  return out
end

return M
