---@mod sightline.ui.pane.help  The pane's help line: `g?` shows (and hides) its keys under the transcript.
---Built from `pane.keys` as configured: a key turned off (`false`) is not listed.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local S = state.S

local ns = api.nvim_create_namespace('sightline.help')

-- What each key does, in the order the list shows them (pane.keys' names).
local WHAT = {
  { 'submit', 'send' },
  { 'send', 'send (Normal)' },
  { 'steer', 'send, steering the turn' },
  { 'stop', 'stop' },
  { 'close', 'hide the pane' },
  { 'accept', 'accept' },
  { 'reject', 'reject' },
  { 'accept_conversation', 'allow for this chat' },
  { 'accept_always', 'allow always' },
  { 'reject_conversation', 'deny for this chat' },
  { 'reject_always', 'deny always' },
  { 'compare', 'compare' },
  { 'edit', 'edit your message' },
  { 'regenerate', 'regenerate' },
  { 'unqueue', 'cancel queued' },
  { 'queue_edit', 'edit queued' },
  { 'block_next', 'next block' },
  { 'block_prev', 'previous block' },
  { 'block_yank', 'yank block' },
  { 'line_yank', 'yank line' },
  { 'paste', 'paste image' },
  { 'help', 'hide this list' },
}

---The key list, one entry a key (`ga accept`), the keys turned off left out.
---@return string[]
function M.entries()
  local keys = require('sightline.config').get().pane.keys
  local out = {}
  for _, kw in ipairs(WHAT) do
    local lhs = keys[kw[1]]
    if type(lhs) == 'string' and lhs ~= '' then
      table.insert(out, lhs .. ' ' .. kw[2])
    end
  end
  table.insert(out, ':Sightline chats switches conversations')
  return out
end

---The entries as lines of at most `width` cells, parts whole, ` · ` between them.
---@param width integer
---@return string[]
function M.lines(width)
  local lines, line = {}, ''
  for _, part in ipairs(M.entries()) do
    local joined = line == '' and part or (line .. ' · ' .. part)
    if line ~= '' and api.nvim_strwidth(joined) > width then
      table.insert(lines, line)
      line = part
    else
      line = joined
    end
  end
  if line ~= '' then
    table.insert(lines, line)
  end
  return lines
end

---Draw the list under the transcript's last line while it is on (the transcript grew).
function M.redraw()
  if not state.valid_buf(S.tbuf) then
    return
  end
  api.nvim_buf_clear_namespace(S.tbuf, ns, 0, -1)
  if not S.help then
    return
  end
  local width = state.valid_win(S.twin) and (api.nvim_win_get_width(S.twin) - 1) or 60
  local virt = {}
  for _, line in ipairs(M.lines(math.max(20, width))) do
    table.insert(virt, { { line, 'SightlineHint' } })
  end
  local last = api.nvim_buf_line_count(S.tbuf) - 1
  api.nvim_buf_set_extmark(S.tbuf, ns, last, 0, { virt_lines = virt })
end

---`g?`: show the key list, or hide it.
function M.toggle()
  S.help = not S.help
  M.redraw()
end

---Whether the list shows (for tests).
---@return boolean
function M.shown()
  return S.help == true
end

return M
