---@mod sightline.ui.pane.composer  The composer: send, recall sent prompts, the hint while it is empty.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local notice = require('sightline.ui.pane.notice')
local S = state.S

local hint_ns = api.nvim_create_namespace('sightline.hint')

---The composer's send: `sightline.send()`, or the same request with what only the pane
---knows (the earlier message an edit replaces, a steer).
---@param text string
---@param opts {steer: boolean?}?
---@return boolean? ok, string? err
local function send(text, opts)
  local steer = opts and opts.steer or nil
  if S.editing == nil and not steer then
    return require('sightline').send(text)
  end
  local params = { text = text, workspace = vim.fn.getcwd(-1, -1), edit_at = S.editing, steer = steer }
  local res, err = require('sightline.host').request('agent.send', params)
  if not res then
    return nil, err
  end
  return true
end

---Send the composer's text (refused, with a note, when it is empty). While a turn runs it
---is queued (`steer`: delivered at the agent's next tool boundary); after `e` on an earlier
---message it is sent in that message's place (sightline.ui.pane.steer).
---@param opts {steer: boolean?}?
function M.submit(opts)
  if not state.valid_buf(S.cbuf) then
    return
  end
  local text = table.concat(api.nvim_buf_get_lines(S.cbuf, 0, -1, false), '\n')
  if vim.trim(text) == '' then
    notice.notice('sightline: nothing to send: type a message first')
    return
  end
  local function sent()
    require('sightline.ui.pane.steer').edit_done()
    notice.clear()
    table.insert(S.prompts, text)
    S.prompt_index, S.draft = nil, nil
    if state.valid_buf(S.cbuf) then
      api.nvim_buf_set_lines(S.cbuf, 0, -1, false, {})
    end
  end
  if text:byte(1) == 47 then -- '/': a command, a prompt file… (see :help sightline-slash)
    require('sightline.slash').submit(text, sent)
  elseif notice.refused(send(text, opts)) then
    sent()
  end
end

---Step through sent prompts in the composer (delta -1 older, +1 newer). The unsent draft is
---kept when stepping away and comes back past the newest prompt.
---@param delta integer -1 or +1
function M.recall(delta)
  if #S.prompts == 0 or not state.valid_buf(S.cbuf) then
    return
  end
  local i = (S.prompt_index or (#S.prompts + 1)) + delta
  i = math.max(1, math.min(#S.prompts + 1, i))
  if i == (S.prompt_index or (#S.prompts + 1)) then
    return
  end
  if S.prompt_index == nil then
    S.draft = api.nvim_buf_get_lines(S.cbuf, 0, -1, false)
  end
  local lines
  if i > #S.prompts then
    S.prompt_index, lines, S.draft = nil, S.draft or { '' }, nil
  else
    S.prompt_index, lines = i, vim.split(S.prompts[i], '\n', { plain = true })
  end
  api.nvim_buf_set_lines(S.cbuf, 0, -1, false, lines)
end

---<Up>/<Down> in the composer: recall at its first/last line, move the cursor elsewhere.
---@param delta integer -1 or +1
---@return function
function M.recall_key(delta)
  return function()
    local row = api.nvim_win_get_cursor(0)[1]
    local edge = delta < 0 and 1 or api.nvim_buf_line_count(0)
    if row == edge then
      M.recall(delta)
    else
      vim.cmd('normal! ' .. (delta < 0 and 'k' or 'j'))
    end
  end
end

-- The composer's hint: virtual text while it is empty (never buffer text), drawn by a
-- decoration provider so that nothing runs on a keystroke but the redraw itself. Its parts
-- are in the order of priority; a narrow composer shows the first ones whole.
local function hint_parts()
  local keys = require('sightline.config').get().pane.keys
  local parts = { { forms = { 'Ask the agent' }, words = true } }
  if keys.submit then
    table.insert(parts, { forms = { keys.submit .. ' sends' } })
  end
  table.insert(parts, { forms = { '@ mentions a file', '@ mentions' } })
  if keys.send then
    table.insert(parts, { forms = { keys.send .. ' sends in Normal mode' } })
  end
  -- Steering (sightline-pane-steer), after the basics.
  if keys.steer then
    table.insert(parts, { forms = { keys.steer .. ' steers a running turn' } })
  end
  if keys.edit then
    table.insert(parts, { forms = { keys.edit .. ' on your message edits it' } })
  end
  if keys.regenerate then
    table.insert(parts, { forms = { keys.regenerate .. ' regenerates' } })
  end
  return parts
end

---The hint for a composer `width` cells wide: its parts that fit, whole.
---@param width integer
---@return string
function M.hint(width)
  local fit = require('sightline.ui.pane.fit')
  local parts = hint_parts()
  local laid = fit.layout(parts, width, ' · ')
  for n, part in ipairs(laid) do
    if part.index ~= n then
      -- A part after one left out would read out of place: only the leading ones, laid out
      -- again so that those after the gap take no room from them.
      laid = fit.layout(vim.list_slice(parts, 1, n - 1), width, ' · ')
      break
    end
  end
  return fit.plain(laid, ' · ')
end

local hint_registered = false
local hint_width = 0
---Draw the hint in the composer whenever it is empty (once per Neovim).
function M.register_hint()
  if hint_registered then
    return
  end
  hint_registered = true
  api.nvim_set_decoration_provider(hint_ns, {
    on_win = function(_, win, buf)
      if vim.b[buf].sightline_role ~= 'composer' or api.nvim_buf_line_count(buf) ~= 1 then
        return false
      end
      local info = vim.fn.getwininfo(win)[1]
      hint_width = info and (info.width - info.textoff) or api.nvim_win_get_width(win)
      return true
    end,
    on_line = function(_, _, buf, row)
      if row == 0 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == '' then
        api.nvim_buf_set_extmark(buf, hint_ns, 0, 0, {
          virt_text = { { M.hint(hint_width), 'SightlineHint' } },
          virt_text_pos = 'overlay',
          hl_mode = 'combine',
          ephemeral = true,
        })
      end
    end,
  })
end

return M
