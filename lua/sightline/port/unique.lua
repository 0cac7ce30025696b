---@mod sightline.port.unique  The one uniqueness search: where a needle occurs in a buffer's lines.
---Both accept paths use it (an accepted proposal's anchor, a re-anchored selection), so "occurs
---exactly once" means the same everywhere: the lines are read as joined by "\n" with the final
---newline a file holds, and overlapping occurrences count ("aa" occurs twice in "aaa").
local M = {}

---Occurrences of `needle` in `lines`, counting up to `limit` (all when nil), and where the
---first one starts (0-based row, byte col). An empty needle is refused: it occurs everywhere.
---@param lines string[]
---@param needle string
---@param limit? integer stop counting here
---@return integer? count, integer? row, integer? col
---@return string? err 'empty_needle'
function M.find(lines, needle, limit)
  if needle == '' then
    return nil, nil, nil, 'empty_needle'
  end
  limit = type(limit) == 'number' and limit or math.huge
  local parts = vim.split(needle, '\n', { plain = true })
  local k, count, row, col = #parts, 0, nil, nil
  local n = #lines + 1 -- the final newline: an empty virtual line after the last one
  local function line(i)
    return lines[i] or ''
  end
  if k == 1 then
    for i = 1, #lines do
      local init = 1
      while true do
        local s = lines[i]:find(needle, init, true)
        if not s then
          break
        end
        count = count + 1
        if count == 1 then
          row, col = i - 1, s - 1
        end
        if count >= limit then
          return count, row, col
        end
        init = s + 1
      end
    end
    return count, row, col
  end
  local first, last = parts[1], parts[k]
  for i = 1, n - k + 1 do
    local l = line(i)
    local s = #l - #first + 1
    if s >= 1 and l:find(first, s, true) == s then
      local ok = true
      for j = 2, k - 1 do
        if line(i + j - 1) ~= parts[j] then
          ok = false
          break
        end
      end
      if ok and line(i + k - 1):sub(1, #last) == last then
        count = count + 1
        if count == 1 then
          row, col = i - 1, s - 1
        end
        if count >= limit then
          return count, row, col
        end
      end
    end
  end
  return count, row, col
end

---Where a match found at (row, col) ends: (end_row, end_col exclusive), 0-based.
---@param row integer
---@param col integer
---@param needle string
---@return integer end_row, integer end_col
function M.end_of(row, col, needle)
  local parts = vim.split(needle, '\n', { plain = true })
  if #parts == 1 then
    return row, col + #needle
  end
  return row + #parts - 1, #parts[#parts]
end

return M
