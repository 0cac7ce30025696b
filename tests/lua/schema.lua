-- The config schema and the highlight groups as the Lua side defines them, for the docs checks.
-- Called in a child Neovim as lua_helper(nv, 'schema.<function>', ...) (tests/lua_helper.py).
local M = {}

function M.leaves(documented_text)
  local config = require('sightline.config')
  local leaves = {}
  local function walk(node, path)
    for key, sub in pairs(node) do
      local name = path == '' and key or path .. '.' .. key
      if sub.map_of then
        -- A map of names the user chooses (mcp.servers): its entries' fields, under its path.
        walk(sub.map_of, name)
      elseif type(sub[1]) == 'function' or type(sub[1]) == 'string' then
        -- The validator's own words for what it takes: 'one of a, b' names the choices.
        local err = config.check_leaf(name, {}, sub[1], false) or config.check_leaf(name, 0, sub[1], false)
        local expected = err:match('expected (.-), got')
        local choices = expected:match('^one of ([%w_, ]+)$')
        leaves[#leaves + 1] = {
          path = name,
          choices = choices and vim.split(choices, ', ', { plain = true }) or {},
          is_key = expected:match('^key ') ~= nil,
        }
      else
        walk(sub, name)
      end
    end
  end
  walk(config.schema, '')
  local documented = assert(loadstring('return ' .. documented_text))()
  return {
    leaves = leaves,
    defaults_match = vim.deep_equal(documented, config.defaults),
    documented = vim.inspect(documented),
    defaults = vim.inspect(config.defaults),
  }
end

function M.highlight_links()
  require('sightline.ui.highlights').apply()
  require('sightline.reveal').setup_highlights()
  local out = {}
  for name in pairs(vim.api.nvim_get_hl(0, {})) do
    if name:match('^Sightline') then
      out[name] = vim.api.nvim_get_hl(0, { name = name, link = true }).link or ''
    end
  end
  return out
end

return M
