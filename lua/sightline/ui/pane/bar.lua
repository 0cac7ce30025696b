---@mod sightline.ui.pane.bar  The pane's winbar: the state, what waits and its keys, the model, cost and tokens.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local S = state.S
local fit = require('sightline.ui.pane.fit')

local SPINNER = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

local SEP = ' · '

---The name of the provider and its model, the longest first: once when they are the same
---(`echo`), the provider alone while the model is not known yet; `(chat only)` after a
---model that calls no tools (its capabilities: the core offers it none).
local function names(status)
  local provider = type(status.provider) == 'string' and status.provider or ''
  local model = type(status.model) == 'string' and status.model or ''
  if model == '' or model == provider then
    return { provider }
  elseif provider == '' then
    return { model }
  end
  local caps = status.capabilities
  if type(caps) == 'table' and caps.tools == false then
    return { provider .. ' ' .. model .. ' (chat only)', model .. ' (chat only)', model }
  end
  return { provider .. ' ' .. model, model }
end

---The review keys, as the top bar shows them (one form) and as the composer's bar does.
local function review_keys(status)
  local keys = require('sightline.config').get().pane.keys
  local command = status.pending_kind == 'command' or status.pending_kind == 'network'
  local words = {
    keys.accept .. (command and ' allow' or ' accept'),
    keys.reject .. (command and ' deny' or ' reject'),
  }
  if not command and keys.compare then
    table.insert(words, keys.compare .. ' compare')
  end
  -- The kept decisions the question offers (:help sightline-approvals): allow once, for
  -- this chat, always; deny the same. Shorter: the keys alone in that order; then once only.
  local scopes = type(status.pending_scopes) == 'table' and status.pending_scopes or {}
  local allow, deny = { words[1] }, { words[2] }
  local allow_keys, deny_keys = { keys.accept }, { keys.reject }
  for _, scope in ipairs({ 'conversation', 'always' }) do
    local word = scope == 'always' and ' always' or ' chat'
    local a = scope == 'always' and keys.accept_always or keys.accept_conversation
    local d = scope == 'always' and keys.reject_always or keys.reject_conversation
    if vim.tbl_contains(scopes, scope) then
      if a then
        table.insert(allow, a .. ' allow' .. word)
        table.insert(allow_keys, a)
      end
      if d then
        table.insert(deny, d .. ' deny' .. word)
        table.insert(deny_keys, d)
      end
    end
  end
  if #allow + #deny == 2 then
    local own = { table.concat(words, '  ') }
    if #words > 2 then
      table.insert(own, table.concat(words, '  ', 1, 2)) -- compare goes first; accept and reject stay
    end
    return table.concat(words, SEP), own
  end
  local all = vim.list_extend(allow, deny)
  local own = {
    table.concat(all, '  '),
    ('allow %s  deny %s'):format(table.concat(allow_keys, '/'), table.concat(deny_keys, '/')),
    table.concat(words, '  ', 1, 2),
  }
  return table.concat(all, SEP), own
end

---An ACP agent's own mode (its name, `mode X` unless the name says mode), warned when it
---runs writes and commands without asking.
---@param mode any status.agent_mode: {id, name, bypasses} or nil
---@return sightline.FitPart?
local function agent_mode_part(mode)
  if type(mode) ~= 'table' or type(mode.name) ~= 'string' or mode.name == '' then
    return nil
  end
  local name = mode.name:gsub('%s+', ' ')
  local form = name:lower():find('mode', 1, true) and name or ('mode ' .. name)
  return { forms = { form }, group = mode.bypasses == true and 'SightlineWarning' or nil }
end

---An ACP agent's other session options (model, thought level, ...), each its value's name;
---a thought level says what it is (`thought Medium`).
---@param list any status.agent_options: {category, name, value_name}[] or nil
---@return sightline.FitPart[]
local function agent_option_parts(list)
  local out = {}
  for _, opt in ipairs(type(list) == 'table' and list or {}) do
    local value = type(opt) == 'table' and opt.value_name
    if type(value) == 'string' and value ~= '' then
      local label = opt.category == 'model' and value
        or opt.category == 'thought_level' and ('thought ' .. value)
        or (tostring(opt.name or ''):lower() .. ' ' .. value)
      table.insert(out, { forms = { (label:gsub('%s+', ' ')) } })
    end
  end
  return out
end

---@class sightline.BarView
---@field elapsed? number seconds the running turn has taken
---@field frame? integer the spinner's frame
---@field notice? {text: string, level: integer} the last refusal or failure shown

---The bar's parts in the order of priority (the state, what waits and its keys, a refusal,
---the mode, the model, the cost, the tokens); the parts the core worded come from it.
---@param status table the core's status, with the configured names where it has none yet
---@param view sightline.BarView
---@return sightline.FitPart[] parts, string[]? keys the review keys for the composer's bar
local function parts(status, view)
  local out, own = {}, nil
  if status.state == 'working' then
    local spin = SPINNER[view.frame or 1] or SPINNER[1]
    local form = view.elapsed and ('%s working %.1fs'):format(spin, view.elapsed) or (spin .. ' working')
    table.insert(out, { forms = { form }, group = 'SightlineWorking' })
  elseif status.state == 'awaiting_decision' then
    -- What waits is one part (however the core words it), shortened at a word if it must be.
    local pending = type(status.pending) == 'string' and status.pending:gsub('\n.*', '') or 'waiting'
    table.insert(out, { forms = { '● ' .. pending }, words = true, group = 'SightlineWarning' })
    local top
    top, own = review_keys(status)
    table.insert(out, { forms = { top }, keys = true })
  else
    table.insert(out, { forms = { 'sightline' } })
  end
  if view.notice then
    local group = view.notice.level >= vim.log.levels.ERROR and 'SightlineError' or 'SightlineWarning'
    local text = tostring(view.notice.text):gsub('\n.*', '')
    table.insert(out, { forms = { '✗ ' .. text }, words = true, group = group })
  end
  if status.mode == 'plan' then
    table.insert(out, { forms = { 'plan mode' } })
  end
  if status.autoaccept == true then
    table.insert(out, { forms = { 'autoaccept' } })
  end
  local agent_mode = agent_mode_part(status.agent_mode)
  if agent_mode then
    table.insert(out, agent_mode)
  end
  for _, part in ipairs(agent_option_parts(status.agent_options)) do
    table.insert(out, part)
  end
  table.insert(out, { forms = names(status) })
  local usage = type(status.usage_parts) == 'table' and status.usage_parts or {}
  if type(usage.cost) == 'string' then
    table.insert(out, { forms = { usage.cost } })
  end
  local tokens = type(usage.tokens) == 'table' and usage.tokens or {}
  if #tokens > 0 then
    -- The counts, all of them first, then fewer from the end (the cache count goes first).
    local forms = {}
    for n = #tokens, 1, -1 do
      table.insert(forms, table.concat(tokens, SEP, 1, n))
    end
    table.insert(out, { forms = forms })
  end
  return out, own
end

---The pane's bars for `status` in `width` cells: the transcript's, and the composer's (the
---review keys, when they do not fit beside what waits; '' otherwise). Each part is whole or
---absent, in the order of priority, and the whole fits the width.
---@param status table
---@param width integer
---@param view sightline.BarView
---@return string top, string keys
function M.layout(status, width, view)
  local list, own = parts(status, view)
  local laid = fit.layout(list, width, SEP)
  local keys = ''
  if own then
    local shown = false
    for _, part in ipairs(laid) do
      shown = shown or list[part.index].keys == true
    end
    if not shown then
      local forms = {}
      for _, form in ipairs(own) do
        table.insert(forms, form)
      end
      local row = fit.layout({ { forms = forms, group = 'SightlineWarning' } }, width, SEP)
      keys = fit.statusline(row, SEP)
    end
  end
  -- `%<` last: a bar drawn before a resize reached it is cut at its end, never its start.
  return fit.statusline(laid, SEP) .. '%<', keys
end

---The status the bar shows: the core's, with the configured provider and model while the
---core has named none (before it starts).
---@return table
local function shown_status()
  local status = require('sightline.host').status()
  if type(status.provider) ~= 'string' or status.provider == '' then
    local named = require('sightline').status()
    status = vim.tbl_extend('force', status, { provider = named.provider, model = named.model })
  end
  return status
end

---Draw the bar of the transcript window (and the composer's, for keys that did not fit).
function M.render()
  if state.valid_win(S.twin) then
    local width = api.nvim_win_get_width(S.twin)
    local view = {
      elapsed = S.since and (vim.uv.now() - S.since) / 1000 or nil,
      frame = S.frame,
      notice = S.notice,
    }
    local top, keys = M.layout(shown_status(), width, view)
    vim.wo[S.twin][0].winbar = top
    if state.valid_win(S.cwin) and vim.wo[S.cwin][0].winbar ~= keys then
      vim.wo[S.cwin][0].winbar = keys
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
        vim.schedule_wrap(state.bind(function()
          S.frame = S.frame % #SPINNER + 1
          M.render()
        end))
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
