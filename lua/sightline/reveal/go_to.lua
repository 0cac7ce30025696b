--- go_to_position: reveal's opposite on purpose. It opens the file in the editor window, moves
--- the cursor and selects.
---
--- The agent never redirects the user's keystrokes: while the user types (Insert, Replace,
--- Terminal or Operator-pending mode, the command line, a prompt) or has the focus in
--- sightline's pane, dialog or a float, the current window and mode stay as they are. Then only
--- the editor window's cursor moves and `'<`/`'>` are set, so `gv` there selects; the result
--- says so, for the model and (through the tool's transcript note) for the user.
local api = vim.api
local args = require('sightline.reveal.args')
local windows = require('sightline.reveal.windows')

local M = {}

---@param line string
---@param col integer 1-based character column
---@return integer byte column, 0-based
local function byte_col(line, col)
  local b = vim.fn.byteidx(line, col - 1)
  return b >= 0 and b or #line
end

---@return {[1]: integer, [2]: integer} 1-based row, 0-based byte column of (row, col) in buf
local function pos(buf, row, col)
  return { row, byte_col(api.nvim_buf_get_lines(buf, row - 1, row, true)[1], col or 1) }
end

local VISUAL = { v = true, V = true, ['\22'] = true, s = true, S = true, ['\19'] = true }

--- Whether Visual (or Select) mode is live. Ask before nvim_win_call, which hides it: its
--- start is global, so a :normal command run in another window would move the user's
--- selection.
local function visual_live()
  return VISUAL[api.nvim_get_mode().mode:sub(1, 1)] == true
end

--- Show buf in win (the current window, or the one nvim_win_call made current), recording a
--- jump there so <C-o> returns. `live`: Visual mode is live, so no :normal.
local function show(win, buf, live)
  if api.nvim_win_get_buf(win) ~= buf then
    vim.cmd.buffer(buf)
  elseif live then
    vim.cmd("mark '")
  else
    vim.cmd("normal! m'")
  end
  vim.bo[buf].buflisted = true
end

--- Open the folds that hide the cursor line (zv).
local function unfold(win, live)
  if live then
    vim.cmd(('silent! %dfoldopen!'):format(api.nvim_win_get_cursor(win)[1]))
  else
    vim.cmd('normal! zv')
  end
end

--- The Normal-mode path: open buf in the editor window, move the cursor and select
--- (charwise with an end column, linewise with only an end line).
local function navigate(o, buf)
  local ew = windows.editor_window()
  api.nvim_set_current_win(ew)
  show(ew, buf, false)
  api.nvim_win_set_cursor(ew, pos(buf, o.line, o.column))
  if o.end_line then
    vim.cmd('normal! ' .. (o.end_column and 'v' or 'V'))
    api.nvim_win_set_cursor(ew, pos(buf, o.end_line, o.end_column))
  end
  vim.cmd('normal! zv')
end

--- Set '< and '> of buf to the range and make it the buffer's last Visual selection, so `gv`
--- selects it (charwise, or linewise without an end column). Runs inside win, which shows buf.
local function set_visual(win, buf, o, from, to, live)
  if live then
    -- Visual mode is live elsewhere (the user selects in the pane): entering it here would end
    -- theirs, so only the marks are set; the buffer keeps its last Visual mode, and a
    -- linewise range spans whole lines so a charwise gv still covers it.
    local last = api.nvim_buf_get_lines(buf, to[1] - 1, to[1], true)[1]
    if not o.end_column then
      from, to = { from[1], 0 }, { to[1], math.max(#last - 1, 0) }
    end
    api.nvim_buf_set_mark(buf, '<', from[1], from[2], {})
    api.nvim_buf_set_mark(buf, '>', to[1], to[2], {})
    return
  end
  -- :normal inside nvim_win_call runs in that window and restores the mode afterwards (the
  -- user's Insert mode or command line carries on); only this way does `gv` learn the type.
  api.nvim_win_set_cursor(win, from)
  vim.cmd('normal! ' .. ((o.end_column or not o.end_line) and 'v' or 'V'))
  api.nvim_win_set_cursor(win, to)
  vim.cmd('normal! \27')
end

--- Where the user is, as the result names it: the mode when it is not Normal, and the window.
---@return string
local function whereabouts(cur, mode)
  local role = vim.b[api.nvim_win_get_buf(cur)].sightline_role or vim.w[cur].sightline_role
  local place = ({
    composer = 'the composer',
    transcript = 'the transcript',
    dialog = 'the Change with Agent dialog',
  })[role] or (role and 'the sightline pane')
  if not place then
    local name = api.nvim_buf_get_name(api.nvim_win_get_buf(cur))
    place = api.nvim_win_get_config(cur).relative ~= '' and 'a floating window'
      or (name ~= '' and vim.fn.fnamemodify(name, ':t') or '[No Name]')
  end
  local c = mode:sub(1, 1)
  local what = c == 'c' and 'the command line over '
    or c == 'r' and 'a prompt over '
    or c == 'i' and 'Insert mode in '
    or c == 'R' and 'Replace mode in '
    or c == 't' and 'Terminal mode in '
    or mode:match('^ni') and 'Insert mode (<C-o>) in '
    or mode:match('^no') and 'a pending operator in '
    or mode:match('^nt') and 'a terminal in '
    or ''
  return what .. place
end

--- The range as the result names it.
local function range_text(o)
  if not o.end_line then
    return ('%d:%d'):format(o.line, o.column or 1)
  elseif o.end_column then
    return ('%d:%d–%d:%d'):format(o.line, o.column or 1, o.end_line, o.end_column)
  end
  return o.line == o.end_line and ('line %d'):format(o.line) or ('lines %d–%d'):format(o.line, o.end_line)
end

--- The focus-keeping path: the current window and mode stay; the editor window (unless it is
--- the one the user is typing in) shows buf at the position; '<,'> are set for `gv`.
---@param cur integer the current window
---@param where string whereabouts(cur)
---@return string
local function keep_focus(o, t, cur, where)
  local buf = t.buf
  local ew = windows.editor_window()
  local from = pos(buf, o.line, o.column)
  local to = pos(buf, o.end_line or o.line, o.end_column or o.column)
  if o.end_line and not o.end_column then
    to = { to[1], 0 }
  end
  local what = range_text(o)
  if ew == cur then
    -- The user types in the editor window itself: its cursor is where their next key goes,
    -- so it stays; the marks alone lead to the range.
    if api.nvim_win_get_buf(cur) ~= buf then
      return ('kept the focus where it was (%s); %s is not shown there, so nothing moved'):format(where, t.name)
    end
    local view = vim.fn.winsaveview()
    set_visual(cur, buf, o, from, to, visual_live())
    vim.fn.winrestview(view) -- set_visual moved the cursor only to record the selection
    return ('kept the focus and the cursor where they were (%s): gv there selects %s'):format(where, what)
  end
  local live = visual_live()
  api.nvim_win_call(ew, function()
    show(ew, buf, live)
    if o.end_line then
      set_visual(ew, buf, o, from, to, live)
    end
    api.nvim_win_set_cursor(ew, from)
    unfold(ew, live)
  end)
  local tail = o.end_line and ('; gv there selects %s'):format(what) or ''
  return ('kept the focus where it was (%s): the editor window shows %s with the cursor at %d:%d%s'):format(
    where,
    t.name,
    o.line,
    o.column or 1,
    tail
  )
end

--- Go to the checked position o in t, in whatever mode Neovim is in.
---@param o table checked by args.check_goto
---@param t sightline.Target
---@return string "OK", "OK (what was done instead of moving the focus)" or an error text
function M.go(o, t)
  local err = args.check_position(o, t)
  if err then
    t.undo()
    return err
  end
  local mode = api.nvim_get_mode().mode
  local cur = api.nvim_get_current_win()
  local in_editor = windows.editor_window() == cur and vim.w[cur].sightline_role == nil
  if in_editor and (mode == 'n' or VISUAL[mode:sub(1, 1)]) then
    if mode ~= 'n' then
      vim.cmd('normal! \27') -- leave Visual/Select mode first
    end
    navigate(o, t.buf)
    return 'OK'
  end
  return ('OK (%s)'):format(keep_focus(o, t, cur, whereabouts(cur, mode)))
end

return M
