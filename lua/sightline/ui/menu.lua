---@mod sightline.ui.menu  "Change with Agent…" as the last item of the right-click PopUp menu.
---Decided afresh on each MenuPopup, as Neovim's own items are. The terminal UI hides a
---disabled item but still shows a disabled separator, so both are removed and re-added.
local M = {}

local ITEM = [[PopUp.Change\ with\ Agent…]]
local SEP = [[PopUp.-sightline-]]

local function remove()
  pcall(vim.cmd, 'vunmenu ' .. ITEM)
  pcall(vim.cmd, 'vunmenu ' .. SEP)
end

---Whether the entry belongs in the menu right now.
---@param mode string the mode() the menu opens in
---@return boolean
function M.wanted(mode)
  local cfg = require('sightline.config').get()
  if not cfg.selection_menu or require('sightline.config').provider_name(cfg) == 'echo' then
    return false
  end
  if not (mode == 'v' or mode == 'V') then
    return false -- no selection (blockwise is refused anyway)
  end
  local state = require('sightline.host').status().state
  return state ~= 'working' and state ~= 'awaiting_decision'
end

---MenuPopup: the PopUp entry is removed and re-added, present only in Visual mode.
function M.on_menu_popup()
  remove()
  if M.wanted(vim.fn.mode()) then
    vim.cmd('vnoremenu ' .. SEP .. ' <Nop>')
    vim.cmd('vnoremenu <silent> ' .. ITEM .. [[ <Cmd>lua require('sightline.ui.change').from_visual()<CR>]])
  end
end

return M
