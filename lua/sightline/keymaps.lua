---@mod sightline.keymaps  Default keys for the <Plug> mappings: set only when free, opt-out.
local M = {}

M.DEFAULTS = { chat = '<Leader>ss', change = '<Leader>sc' }

local plugs = {
  chat = { mode = 'n', plug = '<Plug>(sightline-chat)' },
  change = { mode = 'x', plug = '<Plug>(sightline-change)' },
}

local applied = {} ---@type table<string, {mode: string, lhs: string}>

local by_setup = false

---Set the default keys. `mappings` is the `mappings` option (a table or false); at start-up
---the plugin passes vim.g.sightline's raw value, so the config module need not load.
---Once setup() has applied its keys (`from_setup`), the start-up call changes nothing:
---a user's init.lua runs setup() before Neovim sources plugin/sightline.lua.
---@param mappings table|false|nil
---@param from_setup boolean?
function M.apply(mappings, from_setup)
  if from_setup then
    by_setup = true
  elseif by_setup then
    return
  end
  for name, m in pairs(applied) do
    -- Remove only what is still ours: the user may have mapped the key since.
    if vim.fn.maparg(m.lhs, m.mode) == plugs[name].plug then
      pcall(vim.api.nvim_del_keymap, m.mode, m.lhs)
    end
    applied[name] = nil
  end
  if mappings == false then
    return
  end
  mappings = type(mappings) == 'table' and mappings or {}
  for name, spec in pairs(plugs) do
    local lhs = mappings[name]
    if lhs == nil then
      lhs = M.DEFAULTS[name]
    end
    if type(lhs) == 'string' and lhs ~= '' and vim.fn.maparg(lhs, spec.mode) == '' then
      vim.api.nvim_set_keymap(spec.mode, lhs, spec.plug, { desc = 'sightline: ' .. name })
      applied[name] = { mode = spec.mode, lhs = lhs }
    end
  end
end

return M
