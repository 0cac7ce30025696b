-- The pane bar's layout, called directly: what it draws for a status at a width.
-- Called in a child Neovim as lua_helper(nv, 'bar.<function>', ...) (tests/lua_helper.py).
local M = {}

-- The transcript's and the composer's bars (statusline strings) for each case, one round
-- trip: cases are {status, width, view}.
function M.layout(cases)
  local bar = require('sightline.ui.pane.bar')
  local out = {}
  for _, case in ipairs(cases) do
    local view = case[3] or {}
    if view.notice and view.notice.level == nil then
      view.notice.level = vim.log.levels.WARN
    end
    local top, keys = bar.layout(case[1], case[2], view)
    table.insert(out, { top, keys })
  end
  return out
end

-- Display cells of each text, as Neovim draws them.
function M.cells(texts)
  return vim.tbl_map(function(t)
    return vim.api.nvim_strwidth(t)
  end, texts)
end

return M
