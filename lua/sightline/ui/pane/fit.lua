---@mod sightline.ui.pane.fit  Text in display cells: parts shown whole or not at all, phrases cut at words.
---
--- The bar and the composer's hint are one line each, as wide as their window. What does not
--- fit is left out in whole parts (a cost, a key, a token count), never cut in the middle of a
--- word, and a part never runs over the next: widths are display cells (nvim_strwidth, so
--- double-width and ambiguous characters count as Neovim draws them; strdisplaywidth would
--- add the cell a wide character skips at the screen's edge, as if the text wrapped there).
local M = {}

local ELLIPSIS = '…'

---@class sightline.FitPart
---@field forms string[] the part's texts, longest first: the first that fits is shown
---@field words? boolean when no form fits, the first form's leading words that do, then `…`
---@field group? string its highlight group
---@field keys? boolean marks the review keys (the bar moves them to the composer when absent)

---@class sightline.FitLaid
---@field index integer the part's position in the list given to M.layout
---@field text string the form shown
---@field group? string

---Display cells of `text`.
---@param text string
---@return integer
function M.cells(text)
  return vim.api.nvim_strwidth(text)
end

---The leading words of `text` that fit in `width` cells followed by ` …` (nil when not even
---the first word does). Whitespace separates words; a word is never cut.
---@param text string
---@param width integer
---@return string?
function M.words(text, width)
  local taken, best = nil, nil
  for word in text:gmatch('%S+') do
    taken = taken and (taken .. ' ' .. word) or word
    local candidate = taken .. ' ' .. ELLIPSIS
    if M.cells(candidate) > width then
      break
    end
    best = candidate
  end
  return best
end

---Lay `parts` out in `width` cells, in their order (the order of priority), joined by `sep`.
---First as many parts as fit, each in its narrowest form (a later, narrower part may still
---fit where an earlier one did not); then each, in order, widened to the longest of its forms
---that the room left holds: a long model name gives way to the cost before it is shortened.
---A `words` part is whole or shortened at a word to the room left, and then ends the line.
---@param parts sightline.FitPart[]
---@param width integer
---@param sep string
---@return sightline.FitLaid[]
function M.layout(parts, width, sep)
  local laid, used = {}, 0
  local gap = M.cells(sep)
  for i, part in ipairs(parts) do
    local room = width - used - (#laid > 0 and gap or 0)
    local shown, cut
    if part.words then
      local whole = part.forms[1] or ''
      if whole ~= '' and M.cells(whole) <= room then
        shown = whole
      else
        shown, cut = M.words(whole, room), true
      end
    else
      for n = #part.forms, 1, -1 do
        local form = part.forms[n]
        if form ~= '' and M.cells(form) <= room then
          shown = form
          break
        end
      end
    end
    if shown then
      used = width - room + M.cells(shown)
      table.insert(laid, { index = i, text = shown, group = part.group })
      if cut then
        break -- shortened to the room left: what follows it matters less and has none
      end
    end
  end
  for _, item in ipairs(laid) do
    local part = parts[item.index]
    if not part.words then
      local room = width - used + M.cells(item.text)
      for _, form in ipairs(part.forms) do
        if form ~= '' and M.cells(form) <= room then
          used = used - M.cells(item.text) + M.cells(form)
          item.text = form
          break
        end
      end
    end
  end
  return laid
end

---`laid` as a statusline string (`%` escaped, each part in its group), for 'winbar'.
---@param laid sightline.FitLaid[]
---@param sep string
---@return string
function M.statusline(laid, sep)
  local out = {}
  for _, part in ipairs(laid) do
    local text = part.text:gsub('%%', '%%%%')
    table.insert(out, part.group and ('%#' .. part.group .. '#' .. text .. '%*') or text)
  end
  return table.concat(out, sep)
end

---`laid` as plain text.
---@param laid sightline.FitLaid[]
---@param sep string
---@return string
function M.plain(laid, sep)
  local out = {}
  for _, part in ipairs(laid) do
    table.insert(out, part.text)
  end
  return table.concat(out, sep)
end

return M
