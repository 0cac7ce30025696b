---@mod sightline.ui.pane.bar  The pane's winbar: what waits and its keys, the running turn, the model.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local S = state.S

local SPINNER = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

local function esc(text)
  return (tostring(text):gsub('%%', '%%%%'))
end

---Shorten `text` to `width` display cells with an ellipsis.
local function fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local chars = vim.fn.strchars(text)
  while chars > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, chars)) > width - 1 do
    chars = chars - 1
  end
  return vim.fn.strcharpart(text, 0, chars) .. '…'
end

local function count(n)
  n = tonumber(n) or 0
  if n >= 10000 then
    return ('%dk'):format(math.floor(n / 1000 + 0.5))
  elseif n >= 1000 then
    return ('%.1fk'):format(n / 1000)
  end
  return tostring(n)
end

---The bar: what matters first (what waits and its keys, the running turn, a refusal), then
---`%<` and the rest; a narrow pane cuts the rest, never the first part. When what waits and
---its keys do not fit on one line, the keys go to the composer's bar (second value).
local function winbar_text(status, width)
  local mode = status.mode == 'plan' and 'plan mode' or 'normal'
  local parts =
    { 'sightline', (status.provider or '') .. (status.model and (' ' .. status.model:gsub('%%', '%%%%')) or ''), mode }
  if status.autoaccept then
    table.insert(parts, 'autoaccept')
  end
  if type(status.usage_line) == 'string' and status.usage_line ~= '' then
    table.insert(parts, status.usage_line) -- tokens and cost, computed by the core
  end
  local head = table.concat(parts, ' · ')
  local first, second
  if status.state == 'working' and S.since then
    local secs = (vim.uv.now() - S.since) / 1000
    first = ('%%#SightlineWorking#%s working %.1fs%%*'):format(SPINNER[S.frame], secs)
    local t = type(status.turn_tokens) == 'table' and status.turn_tokens or nil
    if t and ((t.input or 0) > 0 or (t.output or 0) > 0) then
      first = first .. (' · %s in · %s out'):format(count(t.input), count(t.output))
    end
  elseif status.state == 'awaiting_decision' then
    -- The review bar: what waits and the keys that decide it (a command is allowed or denied).
    local keys = require('sightline.config').get().pane.keys
    local command = status.pending_kind == 'command'
    local bar = ('%s %s · %s %s'):format(
      keys.accept,
      command and 'allow' or 'accept',
      keys.reject,
      command and 'deny' or 'reject'
    )
    if not command and keys.compare then
      bar = bar .. (' · %s compare'):format(keys.compare)
    end
    local pending = type(status.pending) == 'string' and status.pending or 'waiting'
    local line = '● ' .. pending .. ' · ' .. bar
    if vim.fn.strdisplaywidth(line) <= width then
      first = ('%%#SightlineWarning#● %s%%* · %s'):format(esc(pending), esc(bar))
    else
      first = ('%%#SightlineWarning#● %s%%*'):format(esc(fit(pending, width - 2)))
      bar = bar:gsub(' · ', '  ') -- a bar of its own: spaces separate well enough
      if vim.fn.strdisplaywidth(bar) > width and not command and keys.compare then
        bar = bar:gsub('  %S+ compare$', '') -- the compare key goes first, accept and reject stay
      end
      second = '%#SightlineWarning#' .. esc(bar) .. '%*%<'
    end
  end
  if S.notice then
    local group = S.notice.level >= vim.log.levels.ERROR and 'SightlineError' or 'SightlineWarning'
    local text = S.notice.text:gsub('\n.*', '')
    local note = ('%%#%s#✗ %s%%*'):format(group, esc(fit(text, math.max(12, width - 2))))
    if status.state == 'awaiting_decision' then
      -- What waits keeps the front; the note ends the bar (its tail survives the cut) and
      -- is whole at the end of the transcript.
      return first .. '%<' .. ' · ' .. head .. ' · ' .. note, second
    end
    first = first and (first .. ' · ' .. note) or note
  end
  if not first then
    -- Idle: the provider and model lead, so a narrow bar drops the usage tail instead.
    return head .. '%<', second
  end
  return first .. '%<' .. ' · ' .. head, second
end

---Draw the bar of the transcript window (and the composer's, for keys that did not fit).
function M.render()
  if state.valid_win(S.twin) then
    local width = api.nvim_win_get_width(S.twin)
    local top, keys = winbar_text(require('sightline.host').status(), width)
    vim.wo[S.twin][0].winbar = top
    if state.valid_win(S.cwin) and vim.wo[S.cwin][0].winbar ~= (keys or '') then
      vim.wo[S.cwin][0].winbar = keys or ''
    end
  end
end

---Called when the core's state changes: start or stop the spinner.
---@param status table the core's status
function M.on_state(status)
  if status.state == 'working' then
    S.since = S.since or vim.uv.now()
    if not S.timer then
      S.timer = vim.uv.new_timer()
      S.timer:start(
        0,
        120,
        vim.schedule_wrap(function()
          S.frame = S.frame % #SPINNER + 1
          M.render()
        end)
      )
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
  M.render()
end

return M
