---@mod sightline.ui.pane.spans  Sorted, disjoint row spans [first, end) the core sends with a delta (folds, cut lines).
local M = {}

---Take a delta's spans into `keep`: those ending at or before `start` stay, the rest the
---delta sends again.
---@param keep integer[][] the spans kept so far (changed in place)
---@param start integer the delta's first row (0-based)
---@param spans integer[][]? the delta's spans from `start` on
---@return boolean changed whether a span was dropped or added
function M.apply(keep, start, spans)
  local changed = false
  while #keep > 0 and keep[#keep][2] > start do
    keep[#keep], changed = nil, true
  end
  for _, span in ipairs(spans or {}) do
    keep[#keep + 1], changed = span, true
  end
  return changed
end

---The span holding 0-based row `row` (bisection), or nil.
---@param spans integer[][]
---@param row integer
---@return integer[]?
function M.find(spans, row)
  local lo, hi = 1, #spans
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local span = spans[mid]
    if row < span[1] then
      hi = mid - 1
    elseif row >= span[2] then
      lo = mid + 1
    else
      return span
    end
  end
  return nil
end

return M
