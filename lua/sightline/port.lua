---@mod sightline.port  The Lua the core calls (and nothing else calls the core from here).
local M = {}

---Draw an edit proposal's hunks in its buffer while it waits (sightline.inline).
---@param spec sightline.HunkSpec
---@return boolean drawn
function M.show_hunks(spec)
  return require('sightline.inline').show(spec)
end

---Remove the inline drawing of proposal `id` (decided, stopped, turn over).
---@param id integer
function M.clear_hunks(id)
  local inline = package.loaded['sightline.inline']
  if inline then
    inline.clear(id)
  end
end

return M
