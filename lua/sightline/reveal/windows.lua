--- Which windows are the user's: the editor window, and the windows a reveal may scroll.
--- Floats and sightline's own panes, dialogs and peeks are never either.
---
--- The editor window is one rule for everything that acts "in the editor" (`@buffer`, a
--- reveal's peek and `reveal.open = "window"`, go_to_position): the most recently used normal
--- window of the current tab that is not a float, nor sightline's pane, dialog or peek, and
--- shows a buffer the user edits (buftype '' or 'acwrite': not help, terminal, quickfix or a
--- plugin's scratch window). "Most recently used" is the current window, else the window left
--- last: plugin/sightline.lua stamps `w:sightline_left` on WinLeave (`wincmd p` alone knows
--- only one window, and a buffer's `lastused` counts whole seconds).
local api = vim.api

local M = {}

---@param win integer
---@return boolean
local function is_sightline(win)
  if vim.w[win].sightline_role ~= nil then
    return true
  end
  local buf = api.nvim_win_get_buf(win)
  return vim.b[buf].sightline_role ~= nil
    or vim.bo[buf].filetype:match('^sightline') ~= nil
    or vim.startswith(api.nvim_buf_get_name(buf), 'sightline://')
end

---@param win integer
---@return boolean
local function is_normal(win)
  return win ~= 0
    and api.nvim_win_is_valid(win)
    and api.nvim_win_get_config(win).relative == ''
    and not is_sightline(win)
end

local EDITED = { [''] = true, acwrite = true }

---@param win integer
---@return boolean
local function is_editor(win)
  return is_normal(win) and EDITED[vim.bo[api.nvim_win_get_buf(win)].buftype] == true
end

--- The editor window (see the module's note), or nil when the tab has none.
---@return integer?
function M.find()
  local cur = api.nvim_get_current_win()
  if is_editor(cur) then
    return cur
  end
  local best, left = nil, -1
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if is_editor(w) then
      local stamp = tonumber(vim.w[w].sightline_left) or 0
      if stamp > left then
        best, left = w, stamp
      end
    end
  end
  return best
end

--- The editor window, else the current window (a tab with no editor window: the peek and
--- go_to_position still have somewhere to go).
---@return integer
function M.editor_window()
  return M.find() or api.nvim_get_current_win()
end

--- Windows of the current tab showing buf that may be scrolled: current first, then the
--- editor window, then the rest; never floats or sightline's own windows.
---@param buf integer
---@return integer[]
function M.showing(buf)
  local cur, ed = api.nvim_get_current_win(), M.editor_window()
  local out = {}
  local function add(w)
    if api.nvim_win_get_buf(w) == buf and is_normal(w) and not vim.tbl_contains(out, w) then
      out[#out + 1] = w
    end
  end
  add(cur)
  add(ed)
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    add(w)
  end
  return out
end

return M
