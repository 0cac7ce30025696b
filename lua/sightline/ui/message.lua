---@mod sightline.ui.message  Every message sightline shows is one screen line.
---
--- A message that fits the message area (|v:echospace|: the columns left of 'showcmd' and
--- 'ruler') is shown as it is. A longer one, or one of several lines, would raise Neovim's
--- hit-enter prompt: vim.notify shows its first words, cut at a word, and says where the rest
--- is — the pane's note at the end of the transcript (ui/pane/notice.lua), which holds the
--- whole text. Every vim.notify of the Lua layer goes through M.notify (a test holds it).
local M = {}

local width = vim.fn.strdisplaywidth

---The cells a message may use on the last screen line without a prompt.
---@return integer
function M.space()
  return math.max(20, vim.v.echospace)
end

---Whether `text` shows whole on one screen line.
---@param text string
---@return boolean
function M.fits(text)
  return not text:find('%c') and width(text) <= M.space()
end

---The longest start of `word` at most `cells` wide (a word wider than the line).
local function cut_word(word, cells)
  local out = ''
  for _, char in ipairs(vim.fn.split(word, [[\zs]])) do
    if width(out .. char) > cells then
      break
    end
    out = out .. char
  end
  return out
end

---`text` when it fits one screen line; else its first words that fit with `… more` after them.
---@param text string
---@param more string where the whole text is (`(see the pane)`)
---@return string
function M.summary(text, more)
  text = tostring(text)
  if M.fits(text) then
    return text
  end
  local space = M.space()
  local tail = '… ' .. more
  if width(tail) > space / 2 then -- a narrow screen: the words matter more than the pointer
    tail = '…'
  end
  local cells = space - width(tail)
  local line = (text:match('^[^\n]*') or ''):gsub('%c', ' ')
  local out = ''
  for word in line:gmatch('%S+') do
    local longer = out == '' and word or (out .. ' ' .. word)
    if width(longer) > cells then
      if out == '' then
        out = cut_word(word, cells)
      end
      break
    end
    out = longer
  end
  if out ~= vim.trim(line) then
    -- End at the last clause boundary (`: `, `; `, `, `, ` (`) when it drops little.
    local clause = 0
    for at in out:gmatch('()[:;,] ') do
      clause = at
    end
    for at in out:gmatch('() %(') do
      clause = math.max(clause, at)
    end
    if clause > #out * 0.75 then
      out = out:sub(1, clause - 1)
    end
  end
  return (out:gsub('[%s,;:]+$', '')) .. tail
end

---Show `msg` with vim.notify on one screen line; a longer message waits whole in the pane.
---@param msg string
---@param level integer? vim.log.levels
---@param opts {show: boolean?}? `show` brings the pane into view when the message is long
function M.notify(msg, level, opts)
  msg = tostring(msg)
  if M.fits(msg) then
    vim.notify(msg, level)
  else
    require('sightline.ui.pane.notice').notice(msg, level or vim.log.levels.INFO, opts)
  end
end

return M
