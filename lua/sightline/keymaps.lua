---@mod sightline.keymaps  Default keys for the <Plug> mappings: set only when free, opt-out.
local M = {}

local plugs = {
  chat = { mode = 'n', plug = '<Plug>(sightline-chat)' },
  change = { mode = 'x', plug = '<Plug>(sightline-change)' },
}

local applied = {} ---@type table<string, {mode: string, lhs: string}>

function M.apply()
  for name, m in pairs(applied) do
    -- Remove only what is still ours: the user may have mapped the key since.
    if vim.fn.maparg(m.lhs, m.mode) == plugs[name].plug then
      pcall(vim.keymap.del, m.mode, m.lhs)
    end
    applied[name] = nil
  end
  local mappings = require('sightline.config').get().mappings
  if mappings == false then
    return
  end
  for name, spec in pairs(plugs) do
    local lhs = mappings[name]
    if lhs and lhs ~= '' and vim.fn.maparg(lhs, spec.mode) == '' then
      vim.keymap.set(spec.mode, lhs, spec.plug, { remap = true, desc = 'sightline: ' .. name })
      applied[name] = { mode = spec.mode, lhs = lhs }
    end
  end
end

return M
