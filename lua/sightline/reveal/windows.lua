--- Which windows are the user's: the editor window, and the windows a reveal may scroll.
--- Floats and sightline's own panes, dialogs and peeks are never either.
local api = vim.api

local M = {}

---@param win integer
---@return boolean
local function is_sightline(win)
  if vim.w[win].sightline_role ~= nil then
    return true
  end
  local buf = api.nvim_win_get_buf(win)
  return vim.b[buf].sightline_role ~= nil or vim.bo[buf].filetype:match('^sightline') ~= nil
end

---@param win integer
---@return boolean
local function is_normal(win)
  return win ~= 0
    and api.nvim_win_is_valid(win)
    and api.nvim_win_get_config(win).relative == ''
    and not is_sightline(win)
end

--- The editor window: the most recently used normal window of the current tab that is not a
--- sightline pane, dialog or float.
---@return integer
function M.editor_window()
  local cur = api.nvim_get_current_win()
  if is_normal(cur) then
    return cur
  end
  local prev = vim.fn.win_getid(vim.fn.winnr('#'))
  if is_normal(prev) then
    return prev
  end
  local best, area = nil, -1
  for _, w in ipairs(api.nvim_tabpage_list_wins(0)) do
    if is_normal(w) and api.nvim_win_get_width(w) * api.nvim_win_get_height(w) > area then
      best, area = w, api.nvim_win_get_width(w) * api.nvim_win_get_height(w)
    end
  end
  return best or cur
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
