---@mod sightline.ui.change  Change with Agent: the visual mapping, the range command, the dialog.
local M = {}
local api = vim.api

local NEEDS_PROVIDER = 'sightline: Change with Agent needs a model provider (set $ANTHROPIC_API_KEY '
  .. 'or provider.name); the echo provider cannot change anything'

local function line_len(buf, row)
  return #api.nvim_buf_get_lines(buf, row, row + 1, true)[1]
end

---The byte just past the character at (row, col): multibyte ends stay whole.
local function char_end(buf, row, col)
  local line = api.nvim_buf_get_lines(buf, row, row + 1, true)[1]
  if col >= #line then
    return #line
  end
  local char_start = vim.str_utf_start(line, col + 1) + col
  return char_start + vim.str_utf_end(line, char_start + 1) + 1
end

---A flat range from two 1-based (line, col) positions and a visual mode.
---@param buf integer
---@param mode string visualmode() or mode(): v, V (blockwise is refused)
---@param p1 integer[] {line, col}
---@param p2 integer[] {line, col}
---@return table? range, string? err
function M.range_from(buf, mode, p1, p2)
  if mode == '\22' then
    return nil, 'sightline: blockwise selections are not supported; select charwise (v) or linewise (V)'
  end
  local a, b = p1, p2
  if b[1] < a[1] or (b[1] == a[1] and b[2] < a[2]) then
    a, b = b, a
  end
  local srow, erow = a[1] - 1, b[1] - 1
  if mode == 'V' then
    return { buffer = buf, start_row = srow, start_col = 0, end_row = erow, end_col = line_len(buf, erow) }
  end
  local scol = math.min(a[2] - 1, line_len(buf, srow))
  -- `$` puts the end past the last character: char_end() stops at the line's end, so the
  -- newline is never part of the range.
  local ecol = char_end(buf, erow, b[2] - 1)
  return { buffer = buf, start_row = srow, start_col = scol, end_row = erow, end_col = ecol }
end

---The range of the visual selection in progress (call from visual mode).
function M.current_selection()
  local mode = vim.fn.mode()
  local v, cur = vim.fn.getpos('v'), vim.fn.getpos('.')
  return M.range_from(api.nvim_get_current_buf(), mode, { v[2], v[3] }, { cur[2], cur[3] })
end

---The range of the last visual selection ('< and '>, visualmode()).
---@param buf integer? 0 or nil: the current buffer
---@return table? range, string? err
function M.last_selection(buf)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  local s, e = api.nvim_buf_get_mark(buf, '<'), api.nvim_buf_get_mark(buf, '>')
  if s[1] == 0 or e[1] == 0 then
    return nil, 'sightline: no visual selection in this buffer yet'
  end
  local mode = vim.fn.visualmode()
  return M.range_from(buf, mode ~= '' and mode or 'v', { s[1], s[2] + 1 }, { e[1], e[2] + 1 })
end

local function provider_ok()
  return require('sightline.config').provider_name() ~= 'echo'
end

local DIALOG_HEIGHT = 5

---A window of the current tab showing buf: the current one first; never a float.
local function window_showing(buf)
  local cur = api.nvim_get_current_win()
  if api.nvim_win_get_buf(cur) == buf and api.nvim_win_get_config(cur).relative == '' then
    return cur
  end
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(w) == buf and api.nvim_win_get_config(w).relative == '' then
      return w
    end
  end
end

---Where the dialog goes (0-based editor row and column of its border): right below the
---selection, or above it when there is no room below, so the selected lines stay in sight;
---only a selection taller than the screen leaves no such place, and then the dialog takes
---the larger side. Centred when no window shows the selection.
---@param range sightline.Range
---@param w integer width with the border
---@param h integer height with the border
---@return integer row, integer col
local function beside(range, w, h)
  local lines = vim.o.lines - vim.o.cmdheight -- the command line stays clear
  local win = window_showing(range.buffer)
  local info = win and vim.fn.getwininfo(win)[1]
  local first = info and math.max(range.start_row + 1, info.topline)
  local last = info and math.min(range.end_row + 1, info.botline)
  if not info or first > last then
    return math.max(math.floor((lines - h) / 2), 0), math.max(math.floor((vim.o.columns - w) / 2), 0)
  end
  -- Screen rows (1-based) of the visible part: the first row of its first line, the last row
  -- of its last line (which may wrap).
  local top = vim.fn.screenpos(win, first, 1).row
  local text = api.nvim_buf_get_lines(range.buffer, last - 1, last, true)[1]
  local bottom = vim.fn.screenpos(win, last, math.max(#text, 1)).row
  if top == 0 then
    top = info.winrow
  end
  if bottom == 0 then -- not fully shown (a long line at the window's end)
    bottom = info.winrow + info.height - 1
  end
  local row
  if bottom + h <= lines then
    row = bottom -- the row under the selection's last screen row
  elseif top - 1 - h >= 0 then
    row = top - 1 - h
  else
    row = (lines - bottom >= top - 1) and math.max(lines - h, 0) or 0
  end
  local col = math.max(math.min(info.wincol - 1 + info.textoff, vim.o.columns - w), 0)
  return row, col
end

local dialog = { win = nil, buf = nil, range = nil }

local function close_dialog()
  if dialog.win and api.nvim_win_is_valid(dialog.win) then
    api.nvim_win_close(dialog.win, true)
  end
  dialog.win = nil
end

local function send_dialog()
  local text = table.concat(api.nvim_buf_get_lines(dialog.buf, 0, -1, false), '\n')
  if vim.trim(text) == '' then
    require('sightline.ui.message').notify('sightline: type an instruction first', vim.log.levels.WARN)
    return
  end
  local ok, err = require('sightline').send(text, dialog.range)
  if not ok then
    require('sightline.ui.pane').refused(ok, err, { show = true })
    return
  end
  vim.cmd.stopinsert()
  close_dialog()
  require('sightline.ui.pane').show()
end

---Open the instruction dialog for a range (taken now; moving the cursor later changes nothing).
---@param range table a flat range (buffer, start_row, start_col, end_row, end_col)
function M.open_dialog(range)
  close_dialog()
  dialog.range = range
  dialog.buf = api.nvim_create_buf(false, true)
  vim.bo[dialog.buf].buftype = 'nofile'
  vim.bo[dialog.buf].bufhidden = 'wipe'
  vim.bo[dialog.buf].filetype = 'markdown'
  vim.b[dialog.buf].sightline_role = 'dialog'
  local width = math.min(70, math.max(40, math.floor(vim.o.columns * 0.5)))
  local row, col = beside(range, width + 2, DIALOG_HEIGHT + 2)
  dialog.win = api.nvim_open_win(dialog.buf, true, {
    relative = 'editor',
    row = row,
    col = col,
    width = width,
    height = DIALOG_HEIGHT,
    border = 'rounded',
    -- The title has one home, scope.title(): the transcript's note comes from it too.
    title = ' Change with Agent: ' .. require('sightline.port.scope').title(range) .. ' ',
    footer = ' <C-s> send · <Esc> cancel ',
    style = 'minimal',
  })
  vim.w[dialog.win].sightline_role = 'dialog'
  local keys = require('sightline.config').get().pane.keys
  local o = { buffer = dialog.buf, nowait = true, silent = true }
  if keys.send then
    vim.keymap.set('n', keys.send, send_dialog, o)
  end
  if keys.submit then
    vim.keymap.set({ 'n', 'i' }, keys.submit, send_dialog, o)
  end
  vim.keymap.set('n', '<Esc>', close_dialog, o)
  vim.keymap.set('n', keys.close or 'q', close_dialog, o)
  vim.cmd.startinsert()
  return true
end

---Lua API: open the dialog for opts (a flat range) or the last visual selection.
---@param opts table? a flat range, or nil for the last visual selection
---@return boolean? ok, string? err
function M.change(opts)
  if not provider_ok() then
    return nil, NEEDS_PROVIDER
  end
  local range, err
  if opts and opts.buffer ~= nil then
    range, err = require('sightline.port.scope').check(opts) -- resolves buffer 0 itself
  else
    range, err = M.last_selection(opts and opts.buffer)
  end
  if not range then
    return nil, err
  end
  return M.open_dialog(range)
end

---<Plug>(sightline-change): from visual mode.
function M.from_visual()
  -- A refusal shows in the pane too: a message alone is lost when Visual mode ends.
  local pane = require('sightline.ui.pane')
  if not provider_ok() then
    api.nvim_feedkeys(vim.keycode('<Esc>'), 'nx', false)
    pane.refused(nil, NEEDS_PROVIDER, { show = true })
    return
  end
  local range, err = M.current_selection()
  -- Leave Visual mode with :normal, not feedkeys(…, 'x'): that would also run the keys the
  -- user typed ahead ("\scfix this") as commands in the file instead of into the dialog.
  vim.cmd('normal! \27')
  if not range then
    pane.refused(nil, err, { show = true })
    return
  end
  M.open_dialog(range)
end

---:[range]Sightline change [instruction]
---@param args string the instruction typed after the command, may be empty
---@param opts table the user command's opts (range, line1, line2)
---@return boolean? ok, string? err
function M.command(args, opts)
  if not provider_ok() then
    return nil, NEEDS_PROVIDER
  end
  local buf = api.nvim_get_current_buf()
  local range, err
  local s, e = api.nvim_buf_get_mark(buf, '<'), api.nvim_buf_get_mark(buf, '>')
  if opts.range > 0 and not (opts.line1 == s[1] and opts.line2 == e[1]) then
    -- A plain line range (:10,20Sightline change): whole lines.
    range, err = M.range_from(buf, 'V', { opts.line1, 1 }, { opts.line2, 1 })
  else
    range, err = M.last_selection(buf)
  end
  if not range then
    return nil, err
  end
  local instruction = table.concat(args, ' ')
  if instruction == '' then
    return M.open_dialog(range)
  end
  local ok, send_err = require('sightline').send(instruction, range)
  if not ok then
    return nil, send_err
  end
  require('sightline.ui.pane').show()
  return true
end

return M
