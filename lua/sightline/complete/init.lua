---@mod sightline.complete  `@` completion in the composer: the omnifunc, the menu that opens
---by itself on `@`, and the item shape the nvim-cmp and blink.cmp sources share.
---The core finds the mention under the cursor, filters and ranks; this module forwards
---the line and hands the items to Neovim (or to an engine).
local M = {}
local api = vim.api

local S = {
  last = nil, ---@type string? the text before the cursor the open menu was computed for
  pending = nil, ---@type table[]? items found by the omnifunc's first call, for its second
  items = {}, ---@type table[] the items of the menu we opened last
}

---For `make bench` and tests: when the last list was handed to Neovim (hrtime), its size,
---its token and the core's CPU time for it.
---@type { at: integer, count: integer, token: string, cpu_ms: number? }?
M.last_list = nil

---A cheap check before asking the core: the text after the last `@` holds no unescaped
---whitespace. The core decides the rest (what may stand before the `@`, escapes).
---@param before string
---@return boolean
local function may_be_mention(before)
  -- Not '.*()@': on a line without `@` that pattern backtracks from every start, which is
  -- quadratic (seconds on a long pasted line). Each `@` starts one scan, up to the next.
  local at = before:find('@[^@]*$')
  if not at then
    return false
  end
  if not before:find('%s', at + 1) then
    return true -- the usual case, without copying a long token
  end
  return not before:sub(at + 1):gsub('\\.', ''):find('%s')
end

---Screen cells from the cursor to the right edge: the core fits the menu into what is left
---from the mention's `@` (Neovim's menu starts there and is clipped at the edge).
---@return integer
local function room()
  local col = api.nvim_win_get_position(0)[2] + vim.fn.wincol() -- the cursor's screen column
  return math.max(1, vim.o.columns - col + 1)
end

---A `/` command being typed at the start of the composer's first line (the core decides
---the rest).
---@param before string
---@param row integer? 0-based line of `before`
---@return boolean
local function may_be_command(before, row)
  -- 47: '/'; after an MCP prompt's name come its arguments
  return row == 0 and before:byte(1) == 47 and (not before:find('%s') or vim.startswith(before, '/mcp:'))
end

---The mention (or `/` command) at the end of `before` (the line up to the cursor) and its items.
---@param before string
---@param fit boolean? fit the items to the built-in menu's room on the screen
---@param row integer? the 0-based line of `before` (a `/` command completes on the first)
---@return integer start byte column (0-based) of the `@` or `/`, -1 when not in one
---@return table[] items complete-items computed by the core, best first
---@return number? cpu_ms the core's CPU time for the answer
---@return integer? refresh_ms set when an item says more is on its way: ask again after it
function M.query(before, fit, row)
  local command = may_be_command(before, row)
  if not command and not may_be_mention(before) then
    return -1, {}
  end
  local res = require('sightline.host').request('complete.candidates', {
    before = before,
    workspace = vim.fn.getcwd(-1, -1),
    room = fit and room() or nil,
    row = row,
    -- where the user's prompt files are (stdpath('config')/sightline/prompts)
    config_dir = command and vim.fn.stdpath('config') or nil,
  })
  if not res then
    return -1, {}
  end
  return res.start, M.items(res.items), res.cpu_ms, res.refresh_ms
end

---Neovim complete-items from the core's columns (one list per field, best first); the
---core says what the kind column shows (`label`) and the LSP kind (`lsp`) of each.
---equal = 1: Neovim must not filter the core's fuzzy matches by prefix; dup = 1: it skips
---its de-duplication, which is quadratic.
---@param cols { word: string[], abbr: string[], menu: string[], info: string[], kind: string[], label: string[], lsp: integer[] }
---@return table[]
function M.items(cols)
  local out = {}
  for i, word in ipairs(cols.word) do
    out[i] = {
      word = word,
      abbr = cols.abbr[i],
      menu = cols.menu[i],
      info = cols.info[i],
      kind = cols.label[i],
      dup = 1,
      equal = 1,
      user_data = { sightline = cols.kind[i], lsp = cols.lsp[i] },
    }
  end
  return out
end

---Ask again after `ms` while the same text stands before the cursor in the same buffer and
---`open()` says the menu still shows (MCP servers starting: their resources come later).
---@param ms integer
---@param before string
---@param open fun(): boolean
---@param again fun()
function M.refresh_later(ms, before, open, again)
  local buf = api.nvim_get_current_buf()
  vim.defer_fn(function()
    if
      api.nvim_get_current_buf() ~= buf
      or not api.nvim_get_mode().mode:find('^i')
      or api.nvim_get_current_line():sub(1, api.nvim_win_get_cursor(0)[2]) ~= before
      or not open()
    then
      return
    end
    again()
  end, ms)
end

---'omnifunc' of the composer (<C-x><C-o>).
---@param findstart integer
---@param _ string
---@return integer|table[]
function M.omnifunc(findstart, _)
  if findstart == 1 then
    local cursor = api.nvim_win_get_cursor(0)
    local before = api.nvim_get_current_line():sub(1, cursor[2])
    local start, items = M.query(before, true, cursor[1] - 1)
    -- The menu it opens is followed like the one that opens by itself.
    S.pending, S.items, S.last = items, items, before
    return start >= 0 and start or -3 -- -3: not a mention, leave completion quietly
  end
  local items = S.pending or {}
  S.pending = nil
  return items
end

---The text before the cursor ends with the word of the selected item: the user is
---moving through the menu (<C-n> inserts the item), not typing. Not the first item: it is
---preselected without being inserted, so typing its whole word (`/review`, a built-in's
---name) must still narrow the menu; a list asked again when <C-p> comes back to it has
---that item first anyway.
local function browsing(before)
  local selected = vim.fn.complete_info({ 'selected' }).selected
  local item = selected and selected > 0 and S.items[selected + 1] or nil
  return item ~= nil and item.word ~= '' and before:sub(-#item.word) == item.word
end

---TextChangedI / TextChangedP: open, narrow or close the menu as the mention is typed.
---@param event string
function M.on_change(event)
  local col = api.nvim_win_get_cursor(0)[2]
  local before = api.nvim_get_current_line():sub(1, col)
  -- The menu's own first TextChangedP, or a repeat: the list already fits.
  if before == S.last or (event == 'TextChangedP' and browsing(before)) then
    S.last = before
    return
  end
  S.last = before
  M.show(before, col)
end

---Open or update the built-in menu for the mention at the end of `before`.
---@param before string the line up to the cursor
---@param col integer the cursor's byte column
function M.show(before, col)
  local start, items, cpu_ms, refresh_ms = M.query(before, true, api.nvim_win_get_cursor(0)[1] - 1)
  if start < 0 then
    if vim.fn.pumvisible() == 1 then
      vim.fn.complete(col + 1, {}) -- left the mention (a space): close our menu
    end
    return
  end
  vim.fn.complete(start + 1, items)
  S.items = items
  M.last_list = { at = vim.uv.hrtime(), count = #items, token = before:sub(start + 2), cpu_ms = cpu_ms }
  if refresh_ms then
    M.refresh_later(refresh_ms, before, function()
      -- still our menu, and the user did not move through it
      return vim.fn.pumvisible() == 1 and S.items == items and vim.fn.complete_info({ 'selected' }).selected <= 0
    end, function()
      M.show(before, col)
    end)
  end
end

---The `/` commands changed (an ACP agent announced new ones): while a `/` command is being
---typed in the composer, its menu asks again, in whichever engine completes there (unless
---the user is moving through the built-in menu).
function M.commands_changed()
  local buf = api.nvim_get_current_buf()
  if vim.b[buf].sightline_role ~= 'composer' or not api.nvim_get_mode().mode:find('^i') then
    return
  end
  local cursor = api.nvim_win_get_cursor(0)
  local before = api.nvim_get_current_line():sub(1, cursor[2])
  if not may_be_command(before, cursor[1] - 1) then
    return
  end
  local engine = S.engines[buf]
  if engine == 'cmp' then
    local cmp = package.loaded['cmp']
    if type(cmp) == 'table' and type(cmp.complete) == 'function' then
      cmp.complete()
    end
  elseif engine == 'blink' then
    local blink = package.loaded['blink.cmp']
    if type(blink) == 'table' and type(blink.show) == 'function' then
      local current = blink.get_context and blink.get_context()
      blink.show({ providers = current and current.providers or { 'sightline' } })
    end
  elseif vim.fn.pumvisible() == 0 or vim.fn.complete_info({ 'selected' }).selected <= 0 then
    S.last = before
    M.show(before, cursor[2])
  end
end

---CompleteDone: after an accepted item, the text it inserted must not open the menu again.
local function on_done()
  local reason = vim.v.event.reason
  if reason == 'accept' or (reason == nil and not vim.tbl_isempty(vim.v.completed_item)) then
    S.last = api.nvim_get_current_line():sub(1, api.nvim_win_get_cursor(0)[2])
  end
end

---Ask the core to list the workspace's files now, so the first `@` finds them ready.
function M.warm()
  local host = require('sightline.host')
  if host.ensure() then
    host.notify('complete.warm', { workspace = vim.fn.getcwd(-1, -1) })
  end
end

---The core's items as LSP CompletionItems for the engines. The core has filtered and
---ranked them already: `filterText` is what the engine matches its input against (so it
---keeps every item) and `sortText` keeps the core's order.
---@param items table[] complete-items (see M.items)
---@param row integer 0-based line
---@param start integer byte column of the `@`
---@param col integer byte column of the cursor
---@param typed string what the engine will match (its keyword at the cursor)
---@return lsp.CompletionItem[]
function M.lsp_items(items, row, start, col, typed)
  local range = { start = { line = row, character = start }, ['end'] = { line = row, character = col } }
  local out = {}
  for i, item in ipairs(items) do
    out[i] = {
      label = item.abbr ~= '' and item.abbr or item.word,
      filterText = typed,
      sortText = ('%05d'):format(i),
      kind = item.user_data.lsp,
      labelDetails = item.menu ~= '' and { description = item.menu } or nil,
      documentation = item.info ~= '' and item.info or nil,
      textEdit = { newText = item.word, range = range },
      -- LSP's preselect: the best item is selected, so <C-y> takes it at once (nvim-cmp
      -- honours it with its default `preselect = cmp.PreselectMode.Item`).
      preselect = i == 1 or nil,
      data = { sightline = item.user_data.sightline },
    }
  end
  return out
end

---Characters an engine must treat as triggers: every printable ASCII mark that is not a
---letter, digit or `_`. blink.cmp hides its menu on a character that is neither a keyword
---character nor a trigger, so `@ext:` and `@src/` need `:` and `/` (and a path `.`, `~`,
---`+`, …). Outside a mention the source answers no items, and the engines then keep their
---menu closed (blink: "the sources that defined the trigger character returned no items").
M.TRIGGERS = {}
for byte = 33, 126 do
  local c = string.char(byte)
  if not c:match('[%w_]') then
    table.insert(M.TRIGGERS, c)
  end
end

S.engines = {} ---@type table<integer, string> composer buffer -> 'native' | 'blink' | 'cmp'
S.warned = {} ---@type table<string, true>

local function warn(msg)
  if not S.warned[msg] then
    S.warned[msg] = true
    require('sightline.ui.message').notify('sightline: ' .. msg, vim.log.levels.WARN)
  end
end

---@param name string
---@return table?
local function loaded(name)
  local mod = package.loaded[name]
  return type(mod) == 'table' and mod or nil
end

local MODULES = { blink = 'blink.cmp', cmp = 'cmp' }
local LABELS = { blink = 'blink.cmp', cmp = 'nvim-cmp' }

---The engine the user set up, for `completion.engine = 'auto'`; never loads one. blink.cmp
---counts once its setup() ran (that loads `blink.cmp.completion`: only loading blink.cmp,
---e.g. for get_lsp_capabilities(), does not); nvim-cmp once `cmp.setup()` gave it sources
---(an nvim-cmp merely loaded, say as a dependency, has none and no key mappings). blink.cmp
---first when both are.
---@return string? name, table? module
function M.detect()
  local blink = loaded('blink.cmp')
  if blink and package.loaded['blink.cmp.completion'] ~= nil then
    return 'blink', blink
  end
  local cmp = loaded('cmp')
  if cmp and type(cmp.get_config) == 'function' then
    local ok, cfg = pcall(cmp.get_config)
    if ok and type(cfg) == 'table' and type(cfg.sources) == 'table' and #cfg.sources > 0 then
      return 'cmp', cmp
    end
  end
  return nil
end

---The engine `completion.engine` asks for (nil: the built-in menu).
---@return string? name, table? module
local function wanted()
  local ok, cfg = pcall(function()
    return require('sightline.config').get()
  end)
  local choice = ok and type(cfg.completion) == 'table' and cfg.completion.engine or 'auto'
  if choice == 'auto' then
    return M.detect()
  elseif choice == 'native' then
    return nil
  end
  -- Asked for by name: loading it is what the user wants (a plugin manager may load it now).
  local mod = loaded(MODULES[choice])
  if not mod then
    local found, required = pcall(require, MODULES[choice])
    mod = found and type(required) == 'table' and required or nil
  end
  if not mod then
    warn(
      ("completion.engine is '%s' but %s is not installed: the built-in menu completes"):format(choice, LABELS[choice])
    )
    return nil
  end
  return choice, mod
end

---The built-in menu: the omnifunc, and the menu that opens by itself on `@`.
---@param buf integer
---@param exclusive boolean turn the loaded engines off in `buf`
local function native(buf, exclusive)
  vim.bo[buf].omnifunc = "v:lua.require'sightline.complete'.omnifunc"
  local group = api.nvim_create_augroup('sightline.complete.native.' .. buf, { clear = true })
  api.nvim_create_autocmd({ 'TextChangedI', 'TextChangedP' }, {
    group = group,
    buffer = buf,
    callback = function(ev)
      M.on_change(ev.event)
    end,
  })
  api.nvim_create_autocmd('CompleteDone', { group = group, buffer = buf, callback = on_done })
  api.nvim_create_autocmd('InsertLeave', {
    group = group,
    buffer = buf,
    callback = function()
      S.last = nil
    end,
  })
  -- The built-in menu asked for, or an engine we could not register with: keep the engines
  -- out of the composer, two menus would fight (blink's `omni` source would call the
  -- omnifunc on every key).
  if exclusive then
    if loaded('blink.cmp') then
      vim.b[buf].completion = false -- blink.cmp's (and Neovim's) per-buffer switch
    end
    local cmp = loaded('cmp')
    if cmp and type(cmp.setup) == 'table' and type(cmp.setup.buffer) == 'function' then
      api.nvim_buf_call(buf, function()
        cmp.setup.buffer({ enabled = false })
      end)
    end
  end
end

---Give `buf` to the engine the configuration picks, else the built-in menu. Runs when the
---composer is made and on each InsertEnter until an engine took it: a plugin manager may
---set an engine up only on the first InsertEnter.
---@param buf integer
function M.choose(buf)
  local current = S.engines[buf]
  if current and current ~= 'native' then
    return -- registered: the engine keeps it
  end
  local name, engine = wanted()
  local exclusive = name ~= nil
  if not name then
    local ok, cfg = pcall(function()
      return require('sightline.config').get()
    end)
    exclusive = ok and type(cfg.completion) == 'table' and cfg.completion.engine == 'native'
  end
  if name and engine then
    local ok, err = pcall(function()
      require('sightline.complete.' .. name).register(engine, buf)
    end)
    if ok then
      S.engines[buf] = name
      -- The engine owns the menu: no 'omnifunc' (blink.cmp's `omni` source would list every
      -- item a second time) and none of the built-in menu's autocmds.
      vim.bo[buf].omnifunc = ''
      pcall(api.nvim_del_augroup_by_name, 'sightline.complete.native.' .. buf)
      return
    end
    warn(('could not register with %s (%s): the built-in menu completes'):format(LABELS[name], tostring(err)))
  end
  if current ~= 'native' then
    S.engines[buf] = 'native'
    native(buf, exclusive)
  end
end

---The menu that completes in `buf`: 'native', 'blink' or 'cmp' (nil before attach).
---@param buf integer
---@return string?
function M.engine(buf)
  return S.engines[buf]
end

---Make `buf` (the composer) complete `@` mentions.
---@param buf integer
function M.attach(buf)
  -- Every menu in the composer, whoever opens it (<C-x><C-o>, <C-n>, an engine's native
  -- view): the best item preselected, nothing inserted until one is taken.
  vim.bo[buf].completeopt = 'menuone,noinsert,popup'
  local group = api.nvim_create_augroup('sightline.complete.' .. buf, { clear = true })
  api.nvim_create_autocmd('BufEnter', {
    group = group,
    buffer = buf,
    callback = function()
      M.warm()
    end,
  })
  api.nvim_create_autocmd('InsertEnter', {
    group = group,
    buffer = buf,
    callback = function()
      M.choose(buf)
    end,
  })
  api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = buf,
    callback = function()
      S.engines[buf] = nil
    end,
  })
  S.engines[buf] = nil
  M.choose(buf)
end

return M
