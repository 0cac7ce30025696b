--- Bringing a range into view without moving a cursor. Vim keeps a window's cursor inside its
--- view (`:help scrolling`), so a window may only be scrolled as far as its cursor stays
--- visible; where no window can, the caller opens a peek instead.
local api = vim.api
local windows = require('sightline.reveal.windows')

local M = {}

---@return boolean
local function has_closed_fold(win, s, e)
  if not vim.wo[win].foldenable then
    return false
  end
  return api.nvim_win_call(win, function()
    for l = s, e do
      if vim.fn.foldclosed(l) ~= -1 then
        return true
      end
    end
    return false
  end)
end

---@return boolean
local function fully_visible(win, s, e)
  return s >= vim.fn.line('w0', win) and e <= vim.fn.line('w$', win) and not has_closed_fold(win, s, e)
end

---@return integer
local function text_height(win, a, b)
  return api.nvim_win_text_height(win, { start_row = a - 1, end_row = b - 1 }).all
end

--- Do lines a..b fit in h screen rows of win? Measured in chunks of h lines, so a far range
--- costs O(h), not O(b - a) (closed folds may still make many lines fit).
---@return boolean
local function fits(win, a, b, h)
  local rows = 0
  while a <= b do
    local to = math.min(b, a + h)
    rows = rows + text_height(win, a, to)
    if rows > h then
      return false
    end
    a = to + 1
  end
  return true
end

--- Scroll win so s..e is in view and the cursor stays where it is (also in view, honouring
--- 'scrolloff'). Verified afterwards, since Neovim moves the view back to the cursor when
--- it would leave it; on failure the view is restored. Returns whether it worked.
---@return boolean
local function try_scroll(win, s, e)
  local h = vim.fn.getwininfo(win)[1].height
  if e - s + 1 > h or has_closed_fold(win, s, e) then
    return false
  end
  local buf = api.nvim_win_get_buf(win)
  local cursor = api.nvim_win_get_cursor(win)
  local c, n = cursor[1], api.nvim_buf_line_count(buf)
  local so = vim.wo[win].scrolloff
  so = math.min(so >= 0 and so or vim.o.scrolloff, math.floor((h - 1) / 2))
  local lo, hi = math.max(1, math.min(s, c - so)), math.min(n, math.max(e, c + so))
  if not fits(win, lo, hi, h) then
    return false
  end
  -- Centre the range where the cursor allows it: context around it reads better. The
  -- smallest usable topline is found by bisection (text height shrinks as the topline
  -- grows); the centred one is never above s - h, so neither is the search.
  local ideal = math.max(1, s - math.floor((h - text_height(win, s, e)) / 2))
  local a, b = math.min(ideal, lo), lo
  while a < b do
    local mid = math.floor((a + b) / 2)
    if text_height(win, mid, hi) <= h then
      b = mid
    else
      a = mid + 1
    end
  end
  local top = math.max(a, math.min(ideal, lo))
  local saved = api.nvim_win_call(win, vim.fn.winsaveview)
  api.nvim_win_call(win, function()
    vim.fn.winrestview({ topline = top, topfill = 0 })
  end)
  local after = api.nvim_win_get_cursor(win)
  if after[1] == cursor[1] and after[2] == cursor[2] and fully_visible(win, s, e) then
    local w0, wend = vim.fn.line('w0', win), vim.fn.line('w$', win)
    if c >= w0 and c <= wend then
      return true
    end
  end
  api.nvim_win_call(win, function()
    vim.fn.winrestview({
      topline = saved.topline,
      topfill = saved.topfill,
      leftcol = saved.leftcol,
      skipcol = saved.skipcol,
    })
  end)
  return false
end

--- `reveal.open = "window"`: show the buffer in the editor window (no jump, no alternate
--- file) with its cursor on the range. Refused (→ peek) where it would end the user's
--- visual or insert mode, or leave a buffer that cannot be hidden.
---@return integer? win
local function show_in_editor(buf, s)
  local ew = windows.editor_window()
  if ew == api.nvim_get_current_win() and api.nvim_get_mode().mode ~= 'n' then
    return nil
  end
  local ok = pcall(api.nvim_win_call, ew, function()
    vim.cmd({ cmd = 'buffer', args = { tostring(buf) }, mods = { keepjumps = true, keepalt = true } })
    vim.fn.winrestview({ lnum = s, col = 0, curswant = 0 })
  end)
  return ok and api.nvim_win_get_buf(ew) == buf and ew or nil
end

--- Get s..e of buf into view in a window: one where it is already visible, else one that can
--- scroll to it, else (`reveal.open = "window"`, buf shown nowhere) the editor window.
---@param buf integer
---@param s integer
---@param e integer
---@return 'visible'|'scrolled'|'window'|nil case nil: no window can show it
---@return integer? win
function M.place(buf, s, e)
  for _, w in ipairs(windows.showing(buf)) do
    if fully_visible(w, s, e) then
      return 'visible', w
    end
  end
  for _, w in ipairs(windows.showing(buf)) do
    if try_scroll(w, s, e) then
      return 'scrolled', w
    end
  end
  if require('sightline.reveal.args').config().open == 'window' and #windows.showing(buf) == 0 then
    local win = show_in_editor(buf, s)
    if win then
      try_scroll(win, s, e) -- centre the range around the new cursor where it fits
      return 'window', win
    end
  end
  return nil
end

return M
