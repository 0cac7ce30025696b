---@mod sightline.pane  The agent pane: a transcript above a composer. It applies what the core computed.
local M = {}
local api = vim.api

local ns = api.nvim_create_namespace('sightline.transcript')
local SPINNER = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

local S = {
  tbuf = nil, ---@type integer?
  cbuf = nil, ---@type integer?
  twin = nil, ---@type integer?
  cwin = nil, ---@type integer?
  timer = nil, ---@type uv.uv_timer_t?
  since = nil, ---@type integer?
  frame = 1,
  prompts = {}, ---@type string[] prompts sent from the composer, oldest first
  prompt_index = nil, ---@type integer?
}

local function valid_buf(b)
  return b and api.nvim_buf_is_valid(b)
end

local function valid_win(w)
  return w and api.nvim_win_is_valid(w)
end

local function scratch(name, role)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  vim.b[buf].sightline_role = role
  return buf
end

local function map(buf, modes, lhs, rhs, desc)
  if lhs and lhs ~= false and lhs ~= '' then
    vim.keymap.set(modes, lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
end

local function notify_refusal(ok, err)
  if not ok and err then
    vim.notify(err, vim.log.levels.WARN)
  end
  return ok
end

function M.submit()
  if not valid_buf(S.cbuf) then
    return
  end
  local text = table.concat(api.nvim_buf_get_lines(S.cbuf, 0, -1, false), '\n')
  if vim.trim(text) == '' then
    return
  end
  if notify_refusal(require('sightline').send(text)) then
    table.insert(S.prompts, text)
    S.prompt_index = nil
    api.nvim_buf_set_lines(S.cbuf, 0, -1, false, {})
  end
end

---Step through sent prompts in the composer (delta -1 older, +1 newer).
function M.recall(delta)
  if #S.prompts == 0 or not valid_buf(S.cbuf) then
    return
  end
  local i = (S.prompt_index or (#S.prompts + 1)) + delta
  i = math.max(1, math.min(#S.prompts + 1, i))
  S.prompt_index = i
  local text = S.prompts[i] or ''
  api.nvim_buf_set_lines(S.cbuf, 0, -1, false, vim.split(text, '\n', { plain = true }))
end

local function set_keys(buf)
  local keys = require('sightline.config').get().pane.keys
  local sl = function(fn, ...)
    local args = { ... }
    return function()
      notify_refusal(require('sightline')[fn](unpack(args)))
    end
  end
  map(buf, 'n', keys.close, M.close, 'sightline: close the pane')
  map(buf, { 'n', 'i' }, keys.stop, sl('stop'), 'sightline: stop the turn')
  map(buf, 'n', keys.accept, sl('decide', 'accept'), 'sightline: accept the proposal')
  map(buf, 'n', keys.reject, sl('decide', 'reject'), 'sightline: reject the proposal')
  map(buf, 'n', keys.compare, sl('compare'), 'sightline: compare the proposal side by side')
  if buf == S.tbuf then
    local chips = function(how)
      return function()
        if not require('sightline.chips').navigate(how) and how == nil then
          vim.cmd('normal! j') -- <CR> off a chip keeps its usual meaning
        end
      end
    end
    map(buf, 'n', '<CR>', chips(nil), 'sightline: open the code reference')
    map(buf, 'n', '<S-CR>', chips('select'), 'sightline: select the code reference')
    map(buf, 'n', 'gs', chips('select'), 'sightline: select the code reference')
  end
  if buf == S.cbuf then
    map(buf, 'n', keys.send, M.submit, 'sightline: send')
    map(buf, { 'n', 'i' }, keys.submit, M.submit, 'sightline: send')
    map(buf, 'n', '<Up>', function() M.recall(-1) end, 'sightline: previous prompt')
    map(buf, 'n', '<Down>', function() M.recall(1) end, 'sightline: next prompt')
  end
end

local function ensure_buffers()
  if not valid_buf(S.tbuf) then
    S.tbuf = scratch('sightline://transcript', 'transcript')
    vim.bo[S.tbuf].undolevels = -1
    vim.bo[S.tbuf].filetype = 'markdown'
    vim.bo[S.tbuf].modifiable = false
    set_keys(S.tbuf)
  end
  if not valid_buf(S.cbuf) then
    S.cbuf = scratch('sightline://composer', 'composer')
    vim.bo[S.cbuf].filetype = 'markdown'
    set_keys(S.cbuf)
    pcall(function() require('sightline.complete').attach(S.cbuf) end)
  end
end

local function style(win, role)
  vim.w[win].sightline_role = role
  local wo = vim.wo[win]
  wo.number, wo.relativenumber, wo.signcolumn = false, false, 'no'
  wo.wrap, wo.linebreak, wo.foldenable = true, true, false
  wo.winfixwidth = true
end

function M.is_open()
  return valid_win(S.twin) and valid_win(S.cwin)
end

---Bring the pane into view without taking the focus.
function M.show()
  if not M.is_open() then
    local win = vim.api.nvim_get_current_win()
    M.open()
    vim.cmd.stopinsert()
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_set_current_win(win)
    end
  end
end

---Open the pane (or focus it) with the composer ready for typing.
function M.open()
  ensure_buffers()
  if not M.is_open() then
    M.close()
    local cfg = require('sightline.config').get().pane
    local width = cfg.width < 1 and math.floor(vim.o.columns * cfg.width) or math.floor(cfg.width)
    S.twin = api.nvim_open_win(S.tbuf, false, { split = cfg.side, win = -1, width = math.max(width, 20) })
    S.cwin = api.nvim_open_win(S.cbuf, true, { split = 'below', win = S.twin, height = 6 })
    style(S.twin, 'pane')
    style(S.cwin, 'pane')
    vim.wo[S.cwin].winfixheight = true
    M.on_state(require('sightline.host').status())
    local last = api.nvim_buf_line_count(S.tbuf)
    api.nvim_win_set_cursor(S.twin, { last, 0 })
  end
  api.nvim_set_current_win(S.cwin)
  vim.cmd.startinsert({ bang = true })
end

---Hide the pane; the transcript stays and shows again on reopen.
function M.close()
  for _, w in ipairs({ S.cwin, S.twin }) do
    if valid_win(w) and #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, w, true)
    end
  end
  S.twin, S.cwin = nil, nil
end

function M.toggle()
  if M.is_open() then
    M.close()
  else
    M.open()
  end
end

---The transcript buffer (created if needed), for tests and integrations.
function M.buffers()
  ensure_buffers()
  return { transcript = S.tbuf, composer = S.cbuf }
end

---Apply a delta computed by the core: replace rows from `start`, repaint their highlights.
function M.apply(delta)
  ensure_buffers()
  local buf = S.tbuf
  local count = api.nvim_buf_line_count(buf)
  if delta.start > count then
    -- A delta was lost (core restarted mid-update): ask for the whole transcript.
    local res = require('sightline.host').request('transcript.full')
    if not res then
      return
    end
    delta = res.transcript
  end
  local follow = valid_win(S.twin) and api.nvim_win_get_cursor(S.twin)[1] >= count
  vim.bo[buf].modifiable = true
  local lines = delta.lines
  if delta.start == 0 and #lines == 0 then
    lines = { '' }
  end
  api.nvim_buf_set_lines(buf, delta.start, -1, false, lines)
  vim.bo[buf].modifiable = false
  api.nvim_buf_clear_namespace(buf, ns, delta.start, -1)
  for _, h in ipairs(delta.hls or {}) do
    local row, col, end_col, group = h[1], h[2], h[3], h[4]
    if end_col < 0 then
      api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = group })
    else
      api.nvim_buf_set_extmark(buf, ns, row, col, { end_col = end_col, hl_group = group })
    end
  end
  require('sightline.chips').apply(buf, delta.start, delta.chips)
  if follow then
    api.nvim_win_set_cursor(S.twin, { api.nvim_buf_line_count(buf), 0 })
  end
end

local function winbar_text(status)
  local mode = status.mode == 'plan' and 'plan mode' or 'normal'
  local parts = { 'sightline', (status.provider or '') .. (status.model and (' ' .. status.model:gsub('%%', '%%%%')) or ''), mode }
  if status.autoaccept then
    table.insert(parts, 'autoaccept')
  end
  if type(status.usage_line) == 'string' and status.usage_line ~= '' then
    table.insert(parts, status.usage_line) -- tokens and cost, computed by the core
  end
  local head = table.concat(parts, ' · ')
  if status.state == 'working' and S.since then
    local secs = (vim.uv.now() - S.since) / 1000
    return ('%%#SightlineWorking#%s working %.1fs%%* · %s'):format(SPINNER[S.frame], secs, head)
  elseif status.state == 'awaiting_decision' then
    -- The review bar: what waits and the keys that decide it (a command is allowed or denied).
    local keys = require('sightline.config').get().pane.keys
    local command = status.pending_kind == 'command'
    local bar = ('%s %s · %s %s'):format(keys.accept, command and 'allow' or 'accept',
      keys.reject, command and 'deny' or 'reject')
    if not command and keys.compare then
      bar = bar .. (' · %s compare'):format(keys.compare)
    end
    return ('%%#SightlineWarning#● %s%%* · %s · %s'):format(
      (status.pending or 'waiting'):gsub('%%', '%%%%'), bar:gsub('%%', '%%%%'), head)
  end
  return head
end

local function render_bar()
  if valid_win(S.twin) then
    vim.wo[S.twin].winbar = winbar_text(require('sightline.host').status())
  end
end

---Called when the core's state changes: start or stop the spinner.
function M.on_state(status)
  if status.state == 'working' then
    S.since = S.since or vim.uv.now()
    if not S.timer then
      S.timer = vim.uv.new_timer()
      S.timer:start(0, 120, vim.schedule_wrap(function()
        S.frame = S.frame % #SPINNER + 1
        render_bar()
      end))
    end
  else
    if status.state ~= 'awaiting_decision' then
      S.since = nil
    end
    if S.timer then
      S.timer:stop()
      S.timer:close()
      S.timer = nil
    end
  end
  render_bar()
end

function M.on_core_exit()
  M.on_state({ state = 'stopped' })
end

return M
