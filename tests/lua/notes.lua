-- What vim.notify showed: captured in _G.sightline_test_notes instead of shown.
-- Called in a child Neovim as lua_helper(nv, 'notes.<function>', ...) (tests/lua_helper.py).
local M = {}

-- From now on, every vim.notify call is recorded (its level defaults to INFO, as Neovim's).
function M.capture()
  _G.sightline_test_notes = {}
  vim.notify = function(msg, level)
    table.insert(_G.sightline_test_notes, { msg = msg, level = level or vim.log.levels.INFO })
  end
end

-- The notes recorded since capture(), oldest first.
function M.taken()
  return _G.sightline_test_notes
end

return M
