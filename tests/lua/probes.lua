-- Calls into sightline's Lua the tests make with several values at once, and event recorders.
-- Called in a child Neovim as lua_helper(nv, 'probes.<function>', ...) (tests/lua_helper.py).
local M = {}

function M.anchor(r, text, watch)
  if watch then
    require('sightline.port.scope').watch(r.buffer)
  end
  local got, err = require('sightline.port.scope').anchor(r, text)
  return got or { error = err }
end

function M.unique_find(cases)
  local out = {}
  for i, case in ipairs(cases) do
    local count, row, col, err = require('sightline.port.unique').find(case[1], case[2], case[3])
    out[i] = { count or vim.NIL, row or vim.NIL, col or vim.NIL, err or vim.NIL }
  end
  return out
end

function M.record_proposals()
  _G.proposals = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'SightlineProposal',
    callback = function(ev)
      table.insert(_G.proposals, ev.data)
    end,
  })
end

return M
