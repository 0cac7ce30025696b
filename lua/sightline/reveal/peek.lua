--- The peek: a non-focusable float on the revealed buffer, for a range no window can scroll
--- to without moving its cursor. It closes with the highlight, or as soon as the user moves.
local api = vim.api
local windows = require('sightline.reveal.windows')

local M = {}

--- The peek's w:sightline_role; windows with it are not the user's.
M.ROLE = 'reveal_peek'

---@class sightline.Peek
---@field win integer
---@field buf integer
---@field group integer

---@type sightline.Peek?
local peek = nil

---@param win integer
---@param tries integer?
local function close_win(win, tries)
  if not api.nvim_win_is_valid(win) then
    return
  end
  -- Closing fails in a few states (the command-line window, textlock): try again soon.
  if not pcall(api.nvim_win_close, win, true) and (tries or 0) < 600 then
    vim.defer_fn(function()
      close_win(win, (tries or 0) + 1)
    end, 100)
  end
end

--- Close the peek (only if it shows buf, when given).
---@param buf integer?
function M.close(buf)
  local p = peek
  if not p or (buf ~= nil and p.buf ~= buf) then
    return
  end
  peek = nil
  pcall(api.nvim_del_augroup_by_id, p.group)
  close_win(p.win)
end

--- Close the peek as soon as the user moves the cursor, changes mode or window. Events can be
--- stale (CursorMoved compares against the last *reported* position), so each one compares
--- the real state with a snapshot instead of trusting the event.
---@param p sightline.Peek
local function watch(p)
  local win = api.nvim_get_current_win()
  local cur = api.nvim_win_get_cursor(win)
  local mode = api.nvim_get_mode().mode
  local function changed()
    if api.nvim_get_current_win() ~= win or api.nvim_get_mode().mode ~= mode then
      return true
    end
    local now = api.nvim_win_get_cursor(win)
    return now[1] ~= cur[1] or now[2] ~= cur[2]
  end
  api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI', 'ModeChanged', 'WinEnter', 'BufEnter', 'TabEnter' }, {
    group = p.group,
    callback = function()
      if peek == p and changed() then
        -- Not inside the autocmd: closing windows there is not always allowed.
        vim.schedule(function()
          if peek == p then
            M.close()
          end
        end)
        return true
      end
    end,
  })
  api.nvim_create_autocmd('WinClosed', {
    group = p.group,
    pattern = tostring(p.win),
    callback = function()
      if peek == p then
        peek = nil
        pcall(api.nvim_del_augroup_by_id, p.group)
      end
      return true
    end,
  })
end

---@return string|table
local function border()
  local b = vim.o.winborder
  return (b ~= nil and b ~= '' and b ~= 'none') and b or 'rounded'
end

--- A non-focusable float on buf over the editor window, showing s..e (its start when taller
--- than the window), on the half of the window away from the user's cursor.
---@param buf integer
---@param s integer
---@param e integer
---@param title string
---@param with_signs boolean
---@return integer win
function M.open(buf, s, e, title, with_signs)
  M.close()
  local ew = windows.editor_window()
  local info = vim.fn.getwininfo(ew)[1]
  local cfg = { focusable = false, noautocmd = true, border = border(), zindex = 45, col = 0 }
  cfg.title = (' %s:%d–%d '):format(title, s, e)
  if info.height >= 3 then
    cfg.relative, cfg.win = 'win', ew
    cfg.width, cfg.height = math.max(1, info.width - 2), math.min(e - s + 1, info.height - 2)
    local cursor_row = api.nvim_win_call(ew, vim.fn.winline)
    cfg.row = cursor_row <= info.height / 2 and info.height - cfg.height - 2 or 0
  else
    cfg.relative, cfg.row = 'editor', 0
    cfg.width = math.max(1, vim.o.columns - 2)
    cfg.height = math.max(1, math.min(e - s + 1, vim.o.lines - vim.o.cmdheight - 3))
  end
  local win = api.nvim_open_win(buf, false, cfg)
  api.nvim_win_set_var(win, 'sightline_role', M.ROLE)
  api.nvim_win_call(win, function()
    -- noautocmd: the user's OptionSet handlers have no business with a transient float.
    vim.cmd(
      'noautocmd setlocal number norelativenumber nowrap nofoldenable nocursorline nolist winblend=0'
        .. ' scrolloff=0 sidescrolloff=0 foldcolumn=0 statuscolumn= winbar= winfixbuf signcolumn='
        .. (with_signs and 'yes:1' or 'no')
        .. ' winhighlight=NormalFloat:Normal,FloatBorder:SightlineRevealBar,FloatTitle:SightlineRevealBar'
    )
    vim.fn.winrestview({ topline = s, lnum = s, col = 0, leftcol = 0 })
  end)
  peek = { win = win, buf = buf, group = api.nvim_create_augroup('sightline.reveal.peek', { clear = true }) }
  watch(peek)
  return win
end

return M
