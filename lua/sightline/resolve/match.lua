--- Matching a member key against names, and picking among several matches.
local M = {}

--- `Outer.name` (also `Outer:name`) → { 'Outer', 'name' }.
---@param key string
---@return string[]
function M.split_key(key)
  local parts = {}
  for p in key:gmatch('[^.:%s]+') do
    parts[#parts + 1] = p
  end
  return parts
end

--- Does path end with the key's components?
---@param path string[]
---@param parts string[]
---@return boolean
function M.suffix_match(path, parts)
  if #parts == 0 or #parts > #path then
    return false
  end
  for i = 1, #parts do
    if path[#path - #parts + i] ~= parts[i] then
      return false
    end
  end
  return true
end

--- The candidate starting nearest near (the first one without near).
---@param candidates sightline.LineRange[]
---@param near integer?
---@return sightline.LineRange?
function M.nearest(candidates, near)
  local best, dist = nil, math.huge
  for _, c in ipairs(candidates) do
    local d = near and math.abs(c.start_line - near) or 0
    if d < dist then
      best, dist = c, d
    end
  end
  return best
end

return M
