---@mod sightline.ui.history  :Sightline history: pick (with a preview), open, rename, delete.
---The user's own vim.ui.select picks when they replaced Neovim's (telescope, fzf-lua, …);
---Neovim's own has no preview, so then sightline shows its list beside the last exchange.
local M = {}
local api = vim.api

local function host()
  return require('sightline.host')
end

---@class sightline.HistoryItem a conversation as history.list answers
---@field path string
---@field title string
---@field created number
---@field used number? when it was last written (the list's order)
---@field messages integer
---@field turns integer?
---@field provider string?
---@field branches {id: string, why: string?, turns: integer, first: string, active: boolean}[]?

---@param n integer
---@return string
local function messages(n)
  return n == 1 and '1 message' or ('%d messages'):format(n)
end

---@param n integer
---@return string
local function turns(n)
  return n == 1 and '1 turn' or ('%d turns'):format(n)
end

---@param c sightline.HistoryItem
---@return string
local function label(c)
  local facts = { type(c.turns) == 'number' and turns(c.turns) or messages(c.messages) }
  if type(c.provider) == 'string' then
    table.insert(facts, c.provider)
  end
  if type(c.branches) == 'table' and #c.branches > 1 then
    table.insert(facts, ('%d branches'):format(#c.branches))
  end
  local when = type(c.used) == 'number' and c.used or c.created
  return ('%s  %s  (%s)'):format(os.date('%Y-%m-%d %H:%M', when), c.title, table.concat(facts, ' · '))
end

---@param b {id: string, why: string?, turns: integer, first: string, active: boolean}
---@return string
local function branch_label(b)
  local how = ({ edit = 'edited', regenerate = 'regenerated' })[b.why] or 'first'
  local first = b.first ~= '' and ('  “%s”'):format(b.first) or ''
  return ('branch %s (%s, %s)%s%s'):format(b.id, how, turns(b.turns), first, b.active and '  · last used' or '')
end

---Whether vim.ui.select is still Neovim's own (inputlist: no preview).
---@return boolean
local function default_select()
  local info = debug.getinfo(vim.ui.select, 'S')
  return info ~= nil and info.source:match('vim/ui%.lua$') ~= nil
end

---The last exchange of a conversation, as the core reads it.
---@param path string
---@return string[]
function M.preview(path)
  local res, err = host().request('history.preview', { path = path })
  return res and res.lines or { tostring(err) }
end

---sightline's own picker: the list in a float, the preview of the item under the cursor
---beside it; <CR> picks, q or <Esc> cancels.
---@param items sightline.HistoryItem[]
---@param prompt string
---@param on_choice fun(item: sightline.HistoryItem?)
local function float_pick(items, prompt, on_choice)
  local cols, rows = vim.o.columns, vim.o.lines
  local width = math.max(math.floor(cols * 0.4), 20)
  local height = math.max(math.min(math.max(#items, 12), rows - 6), 1)
  local pwidth = math.max(cols - width - 6, 10)
  local row, col = math.floor((rows - height) / 2) - 1, 1
  local lbuf, pbuf = api.nvim_create_buf(false, true), api.nvim_create_buf(false, true)
  api.nvim_buf_set_lines(lbuf, 0, -1, false, vim.tbl_map(label, items))
  vim.bo[lbuf].modifiable = false
  local function float(buf, w, c, title, focus)
    return api.nvim_open_win(buf, focus, {
      relative = 'editor',
      focusable = focus,
      row = row,
      col = c,
      width = w,
      height = height,
      border = 'rounded',
      title = ' ' .. title .. ' ',
      style = 'minimal',
    })
  end
  local pwin = float(pbuf, pwidth, col + width + 2, 'last exchange', false)
  local lwin = float(lbuf, width, col, prompt, true)
  vim.wo[lwin].cursorline = true
  vim.wo[pwin].wrap = true
  local done = false
  local function finish(choice)
    if done then
      return
    end
    done = true
    for _, w in ipairs({ lwin, pwin }) do
      pcall(api.nvim_win_close, w, true)
    end
    for _, b in ipairs({ lbuf, pbuf }) do
      pcall(api.nvim_buf_delete, b, { force = true })
    end
    on_choice(choice)
  end
  local function show()
    local item = items[api.nvim_win_get_cursor(lwin)[1]]
    if item and api.nvim_buf_is_valid(pbuf) then
      api.nvim_buf_set_lines(pbuf, 0, -1, false, M.preview(item.path))
    end
  end
  local group = api.nvim_create_augroup('sightline.history_pick', { clear = true })
  api.nvim_create_autocmd('CursorMoved', { group = group, buffer = lbuf, callback = show })
  api.nvim_create_autocmd('WinLeave', {
    group = group,
    buffer = lbuf,
    once = true,
    callback = function()
      vim.schedule(function()
        finish(nil)
      end)
    end,
  })
  local function map(key, fn)
    vim.keymap.set('n', key, fn, { buffer = lbuf, nowait = true })
  end
  map('<CR>', function()
    finish(items[api.nvim_win_get_cursor(lwin)[1]])
  end)
  map('q', function()
    finish(nil)
  end)
  map('<Esc>', function()
    finish(nil)
  end)
  show()
end

---Pick one of this workspace's conversations, then call on_choice with it.
---@param prompt string
---@param on_choice fun(item: sightline.HistoryItem)
---@return boolean? ok, string? err
---@param filter string? only the conversations whose title holds it (any case)
function M.pick(prompt, on_choice, filter)
  local res, err = host().request('history.list')
  if not res then
    return nil, err
  end
  local items = res.conversations
  if #items == 0 then
    return nil, 'sightline: no conversations in this workspace yet'
  end
  if filter and filter ~= '' then
    local want = filter:lower()
    items = vim.tbl_filter(function(c)
      return c.title:lower():find(want, 1, true) ~= nil
    end, items)
    if #items == 0 then
      return nil, ('sightline: no conversation of this workspace has "%s" in its title'):format(filter)
    end
  end
  -- Acted on once the picker is gone: the default picker (inputlist) calls back from inside
  -- its prompt, where the pane's windows and Insert mode would not be drawn for seconds.
  local function chosen(choice)
    if choice then
      vim.schedule(function()
        on_choice(choice)
      end)
    end
  end
  if default_select() then
    float_pick(items, prompt, chosen)
  else
    vim.ui.select(items, { prompt = prompt, format_item = label, kind = 'sightline.history' }, chosen)
  end
  return true
end

---@param msg string?
local function warn(msg)
  if msg then
    require('sightline.ui.message').notify(msg, vim.log.levels.WARN)
  end
end

---Open a conversation at one of its branches.
---@param c sightline.HistoryItem
---@param branch string
local function open_branch(c, branch)
  require('sightline.ui.pane').claim()
  local res, err = host().request('history.open', { path = c.path, branch = branch })
  if res then
    require('sightline.ui.pane').open()
  end
  warn(err)
end

---Pick a conversation and reopen it in the pane (at its last used branch; one with several
---branches asks which, the last used first).
---@param filter string? only the conversations whose title holds it
---@return boolean? ok, string? err
function M.open(filter)
  return M.pick('sightline conversations', function(c)
    if type(c.branches) == 'table' and #c.branches > 1 then
      vim.ui.select(c.branches, { prompt = c.title, format_item = branch_label, kind = 'sightline.branch' }, function(b)
        if b then
          vim.schedule(function()
            open_branch(c, b.id)
          end)
        end
      end)
      return
    end
    local _, err = require('sightline').open_conversation(c.path)
    warn(err)
  end, filter)
end

---:Sightline rename {title}: give the open conversation a title (asked when none is given).
---@param title string
---@return boolean? ok, string? err
function M.rename_current(title)
  local path = host().status().conversation_path
  if type(path) ~= 'string' then
    return nil, 'sightline: no conversation yet: send a message first (or :Sightline history rename)'
  end
  local function save(t)
    if not t or vim.trim(t) == '' then
      return
    end
    local res, err = host().request('history.rename', { path = path, title = t })
    if res then
      require('sightline.ui.message').notify(('sightline: renamed to "%s"'):format(res.title), vim.log.levels.INFO)
    end
    warn(err)
  end
  if vim.trim(title) ~= '' then
    save(title)
  else
    vim.ui.input({ prompt = 'New title: ' }, save)
  end
  return true
end

---Pick a conversation and give it a title (asked with vim.ui.input).
---@return boolean? ok, string? err
function M.rename()
  return M.pick('rename a conversation', function(c)
    vim.ui.input({ prompt = 'New title: ', default = c.title }, function(title)
      if not title or vim.trim(title) == '' then
        return
      end
      local res, err = host().request('history.rename', { path = c.path, title = title })
      if res then
        require('sightline.ui.message').notify(('sightline: renamed to "%s"'):format(res.title), vim.log.levels.INFO)
      end
      warn(err)
    end)
  end)
end

---Pick a conversation and delete its file, after asking.
---@return boolean? ok, string? err
function M.delete()
  return M.pick('delete a conversation', function(c)
    local ask = ('Delete the conversation "%s" (%s)? Its history file is removed.'):format(
      c.title,
      messages(c.messages)
    )
    local answer = vim.fn.confirm(ask, '&Delete\n&Cancel', 2, 'Question')
    vim.cmd.redraw() -- the question leaves the message area: the answer then takes one line
    if answer ~= 1 then
      require('sightline.ui.message').notify('sightline: nothing deleted', vim.log.levels.INFO)
      return
    end
    local res, err = host().request('history.delete', { path = c.path })
    if res then
      require('sightline.ui.message').notify(('sightline: deleted "%s"'):format(c.title), vim.log.levels.INFO)
    end
    warn(err)
  end)
end

M.actions = { rename = M.rename, delete = M.delete }

---:Sightline history [rename|delete|{text}]
---@param args string[]
---@return boolean? ok, string? err
function M.command(args)
  if not args[1] then
    return M.open()
  end
  local action = #args == 1 and M.actions[args[1]]
  if not action then
    return M.open(table.concat(args, ' ')) -- :Sightline history {text} filters
  end
  return action()
end

return M
