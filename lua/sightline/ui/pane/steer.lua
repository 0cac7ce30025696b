---@mod sightline.ui.pane.steer  Edit, regenerate, fork, and the queued messages: the pane's keys for them.
---The core decides what each does (agent/steering.py); this forwards the key and draws what
---it answered: an edited message's text in the composer, the queued messages (dimmed, as
---virtual lines under the transcript), texts given back to the composer.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local notice = require('sightline.ui.pane.notice')
local S = state.S

local ns = api.nvim_create_namespace('sightline.queued')
local edit_ns = api.nvim_create_namespace('sightline.editing')

local function host()
  return require('sightline.host')
end

---@return table
local function keys()
  return require('sightline.config').get().pane.keys
end

---Put `text` in the composer (replacing what it holds) and focus it at its end.
---@param text string
function M.into_composer(text)
  local layout = require('sightline.ui.pane.layout')
  layout.show()
  if not state.valid_buf(S.cbuf) then
    return
  end
  local lines = vim.split(text, '\n', { plain = true })
  api.nvim_buf_set_lines(S.cbuf, 0, -1, false, lines)
  if state.valid_win(S.cwin) then
    api.nvim_set_current_win(S.cwin)
    api.nvim_win_set_cursor(S.cwin, { #lines, #lines[#lines] })
  end
end

---Show (or clear) the composer's line saying that sending forks at an earlier message.
local function draw_editing()
  if not state.valid_buf(S.cbuf) then
    return
  end
  api.nvim_buf_clear_namespace(S.cbuf, edit_ns, 0, -1)
  if S.editing then
    -- Beside the text (a virtual line above the first would need the window scrolled).
    api.nvim_buf_set_extmark(S.cbuf, edit_ns, 0, 0, {
      virt_text = { { 'editing an earlier message: sending forks there', 'SightlineQueued' } },
      virt_text_pos = 'right_align',
    })
  end
end

---The row (0-based) of the transcript under the cursor, or nil outside the transcript.
---@return integer?
local function transcript_row()
  if api.nvim_get_current_buf() ~= S.tbuf then
    return nil
  end
  return api.nvim_win_get_cursor(0)[1] - 1
end

---`e` on one of your messages: its text into the composer; sending it forks there.
---@return boolean? ok, string? err
function M.edit()
  local row = transcript_row()
  if not row then
    return nil, 'sightline: edit works in the transcript, on one of your messages'
  end
  local res, err = host().request('agent.message_at', { row = row })
  if not res then
    return nil, err
  end
  S.editing = res.at
  M.into_composer(res.text)
  draw_editing()
  return true
end

---The composer was sent or emptied: no longer an edit.
function M.edit_done()
  if S.editing ~= nil then
    S.editing = nil
    draw_editing()
  end
end

---The composer changed: emptied, it is no longer an edit.
function M.on_composer_change()
  if S.editing ~= nil and state.valid_buf(S.cbuf) then
    local lines = api.nvim_buf_get_lines(S.cbuf, 0, -1, false)
    if #lines == 1 and lines[1] == '' then
      M.edit_done()
    end
  end
end

---`r` / :Sightline regenerate: another answer to your last message.
---@return boolean? ok, string? err
function M.regenerate()
  local res, err = host().request('agent.regenerate')
  if not res then
    return nil, err
  end
  return true
end

---:Sightline fork: a new conversation with this one's history (up to your message under
---the cursor, which comes back into the composer, when the cursor is on one).
---@param at_cursor boolean?
---@return boolean? ok, string? err
function M.fork(at_cursor)
  local params = {}
  local row = at_cursor and transcript_row()
  if row then
    local found = host().request('agent.message_at', { row = row })
    if found then
      params.at = found.at
    end
  end
  local res, err = host().request('agent.fork', params)
  if not res then
    return nil, err
  end
  M.edit_done()
  if res.text and res.text ~= vim.NIL then
    M.into_composer(res.text)
  end
  require('sightline.ui.message').notify(
    'sightline: forked into a new conversation; the other one is in :Sightline history',
    vim.log.levels.INFO
  )
  return true
end

---:Sightline steer: the queued messages go in at the agent's next tool boundary.
---@return boolean? ok, string? err
function M.steer()
  local res, err = host().request('agent.steer')
  if not res then
    return nil, err
  end
  return true
end

---Take the last queued message back: `cancel` drops it, `edit` puts it in the composer.
---@param how "cancel"|"edit"
---@return boolean? ok, string? err
function M.unqueue(how)
  local res, err = host().request('agent.unqueue', { how = how })
  if not res then
    return nil, err
  end
  if how == 'edit' then
    M.into_composer(res.text)
  end
  return true
end

---Texts the core gave back (queued messages not sent): appended to the composer's text.
---@param texts string[]
function M.restore(texts)
  require('sightline.ui.pane.layout').ensure_buffers()
  if not state.valid_buf(S.cbuf) or #texts == 0 then
    return
  end
  local have = api.nvim_buf_get_lines(S.cbuf, 0, -1, false)
  local lines = (#have == 1 and have[1] == '') and {} or have
  for _, text in ipairs(texts) do
    if #lines > 0 then
      table.insert(lines, '')
    end
    vim.list_extend(lines, vim.split(text, '\n', { plain = true }))
  end
  api.nvim_buf_set_lines(S.cbuf, 0, -1, false, lines)
  notice.notice('sightline: your queued message was not sent: it is back in the composer', vim.log.levels.INFO, {
    notify = false,
  })
end

---The queued messages, dimmed under the transcript's last line, with the keys for them.
---@param queued {id: integer, text: string, steer: boolean}[]?
function M.draw_queued(queued)
  S.queued = (queued and queued ~= vim.NIL) and queued or {}
  M.redraw()
end

---Draw the queued messages again (the transcript grew: they follow its last line).
function M.redraw()
  if not state.valid_buf(S.tbuf) then
    return
  end
  api.nvim_buf_clear_namespace(S.tbuf, ns, 0, -1)
  local queued = S.queued
  if not queued or #queued == 0 then
    return
  end
  local lines = {}
  for _, q in ipairs(queued) do
    local first = vim.split(q.text, '\n', { plain = true })[1]
    local when = q.steer and 'at the next tool boundary' or 'when the turn ends'
    table.insert(lines, { { ('◌ queued (sent %s): %s'):format(when, first), 'SightlineQueued' } })
  end
  local k, help = keys(), {}
  if k.unqueue then
    table.insert(help, k.unqueue .. ' cancels')
  end
  if k.queue_edit then
    table.insert(help, k.queue_edit .. ' edits')
  end
  table.insert(help, ':Sightline steer sends it at the next tool boundary')
  table.insert(lines, { { '  ' .. table.concat(help, ' · '), 'SightlineQueued' } })
  local last = api.nvim_buf_line_count(S.tbuf) - 1
  api.nvim_buf_set_extmark(S.tbuf, ns, last, 0, { virt_lines = lines })
end

return M
