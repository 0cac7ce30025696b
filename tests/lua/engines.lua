-- Completion engines as sightline sees them (fakes of nvim-cmp and blink.cmp), and calls
-- into sightline's sources the way each engine makes them.
-- Called in a child Neovim as lua_helper(nv, 'engines.<function>', ...) (tests/lua_helper.py).
local M = {}

-- nvim-cmp a1d5048 as sightline sees it: `cmp.setup(config)` (a callable table, as the real
-- one) sets the global configuration whose `sources` get_config() returns (none by default).
function M.fake_cmp()
  _G.fake_cmp = { sources = {}, buffer = {}, global = { sources = {} } }
  package.preload['cmp'] = function()
    local cmp = { config = { compare = { order = 'order-comparator' } } }
    cmp.PreselectMode = { Item = 'item', None = 'none' } -- types/cmp.lua
    -- the menu: visible() while a test says so; complete() asks the source again for the
    -- text before the cursor, its answer kept in `last`
    function cmp.visible()
      return _G.fake_cmp.visible == true
    end
    function cmp.complete()
      _G.fake_cmp.completes = (_G.fake_cmp.completes or 0) + 1
      local before = vim.api.nvim_get_current_line():sub(1, vim.api.nvim_win_get_cursor(0)[2])
      _G.fake_cmp.last = M.cmp_complete(before).response
      return true
    end
    cmp.setup = setmetatable({
      buffer = function(config)
        _G.fake_cmp.buffer[vim.api.nvim_get_current_buf()] = config
      end,
    }, {
      __call = function(_, config)
        _G.fake_cmp.global = config
      end,
    })
    function cmp.register_source(name, source)
      _G.fake_cmp.sources[name] = source
      return 7
    end
    function cmp.get_config()
      return _G.fake_cmp.global
    end
    return cmp
  end
end

-- A stand-in for blink.cmp 73ea297b, faithful where sightline depends on it: setup() merges
-- the user's `sources` and loads `blink.cmp.completion`; add_source_provider asserts as the
-- real one does; providers are built with `require(module).new(opts, config)`; the trigger
-- rule of completion/trigger/init.lua (a trigger character opens a fresh context, a keyword
-- character continues it, any other character hides the menu) and the rule of
-- completion/init.lua that hides a trigger-character menu when no source defining that
-- character returned items; the `omni` provider (sources/complete_func.lua) reads
-- 'omnifunc' and is enabled whenever it is set; the `buffer` provider offers the words of
-- the buffers shown in windows, those with 'buftype' nofile left out; a provider's `fallbacks` (a list, or a function of the context and the enabled
-- ids) are asked only when every provider they fall back from returned no items
-- (sources/lib/tree.lua); `show({ providers })` opens a new context (init.lua).
function M.fake_blink()
  local config = {
    sources = {
      default = { 'lsp', 'path', 'snippets', 'buffer', 'omni' },
      per_filetype = {},
      providers = { omni = { module = 'fake_blink.omni' }, buffer = { module = 'fake_blink.buffer' } },
    },
  }
  _G.fake_blink = { config = config, filetypes = {}, menu = nil, calls = 0 }
  package.preload['blink.cmp.config'] = function()
    return config
  end
  package.preload['blink.cmp'] = function()
    local blink = {}
    function blink.setup(opts)
      config.sources = vim.tbl_deep_extend('force', config.sources, (opts or {}).sources or {})
      require('blink.cmp.completion')
    end
    function blink.add_source_provider(id, provider)
      assert(config.sources.providers[id] == nil, 'Provider with id ' .. id .. ' already exists')
      assert(type(provider.module) == 'string', 'module must be a string')
      config.sources.providers[id] = provider
    end
    function blink.is_menu_visible()
      return _G.fake_blink.menu ~= nil
    end
    function blink.get_context()
      return _G.fake_blink.menu and { providers = vim.list_extend({}, config.sources.default) } or nil
    end
    -- init.lua: with the menu open only a call naming providers shows again (a new context)
    function blink.show(opts)
      if _G.fake_blink.menu ~= nil and not (opts and opts.providers) then
        return
      end
      _G.fake_blink.shows = (_G.fake_blink.shows or 0) + 1
      vim.schedule(function()
        _G.fake_blink.show(nil)
      end)
      return true
    end
    function blink.add_filetype_source(ft, id)
      table.insert(_G.fake_blink.filetypes, { ft, id })
    end
    return blink
  end
  package.preload['fake_blink.omni'] = function()
    local omni = {}
    function omni.new()
      return setmetatable({}, { __index = omni })
    end
    function omni:enabled()
      return vim.bo.omnifunc ~= '' and vim.api.nvim_get_mode().mode == 'i'
    end
    function omni:get_completions(ctx, resolve)
      local func = vim.bo.omnifunc:match('^v:lua%.(.+)')
      local start = vim.fn.luaeval(func .. '(_A[1], _A[2])', { 1, '' })
      local base = ctx.line:sub(start + 1, ctx.cursor[2])
      local words = vim.fn.luaeval(func .. '(_A[1], _A[2])', { 0, base })
      local items = {}
      for _, w in ipairs(type(words) == 'table' and words or {}) do
        table.insert(items, { label = w.abbr or w.word, textEdit = { newText = w.word } })
      end
      resolve({ items = items, is_incomplete_forward = true, is_incomplete_backward = true })
    end
    return omni
  end
  package.preload['fake_blink.buffer'] = function()
    local buffer = {}
    function buffer.new()
      return setmetatable({}, { __index = buffer })
    end
    function buffer:get_completions(ctx, resolve)
      local kw = ctx.line:sub(ctx.bounds.start_col, ctx.cursor[2])
      local items, seen = {}, {}
      for _, win in ipairs(vim.api.nvim_list_wins()) do
        local buf = vim.api.nvim_win_get_buf(win)
        for _, l in ipairs(vim.bo[buf].buftype ~= 'nofile' and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or {}) do
          for w in l:gmatch('[%w_]+') do
            if #kw > 0 and w ~= kw and vim.startswith(w, kw) and not seen[w] then
              seen[w] = true
              table.insert(items, { label = w, textEdit = { newText = w } })
            end
          end
        end
      end
      resolve({ items = items, is_incomplete_forward = false, is_incomplete_backward = false })
    end
    return buffer
  end
  package.preload['blink.cmp.completion'] = function()
    local instances = {}
    local function provider(id)
      local cfg = config.sources.providers[id]
      if not cfg then
        return nil
      end
      instances[id] = instances[id] or require(cfg.module).new(cfg.opts or {}, cfg)
      return instances[id]
    end
    local function enabled()
      local ids = vim.list_extend({}, config.sources.default)
      for _, pair in ipairs(_G.fake_blink.filetypes) do
        if pair[1] == vim.bo.filetype then
          table.insert(ids, pair[2])
        end
      end
      local out, seen = {}, {}
      for _, id in ipairs(ids) do
        local p = not seen[id] and provider(id)
        seen[id] = true
        if p and (p.enabled == nil or p:enabled()) then
          out[id] = p
        end
      end
      return out
    end
    local function keyword(c)
      return c == '-' or c:match('^[%w_]$') ~= nil or c:byte() >= 128
    end
    local function show(char)
      local line = vim.api.nvim_get_current_line()
      local cursor = vim.api.nvim_win_get_cursor(0)
      local kw = line:sub(1, cursor[2]):match('[%w_%-\128-\255]*$')
      local bounds = { line_number = cursor[1], start_col = cursor[2] - #kw + 1, length = #kw }
      local ctx = { bufnr = 0, line = line, cursor = cursor, bounds = bounds }
      local menu, from_trigger = {}, false
      local providers = enabled()
      local ids = vim.tbl_keys(providers)
      -- tree.lua: a fallback depends on every provider naming it; it runs once they all
      -- returned nothing.
      local depends = {}
      for _, id in ipairs(ids) do
        local fallbacks = config.sources.providers[id].fallbacks or {}
        if type(fallbacks) == 'function' then
          fallbacks = fallbacks(ctx, ids)
        end
        for _, f in ipairs(fallbacks) do
          depends[f] = depends[f] or {}
          table.insert(depends[f], id)
        end
      end
      local counts = {}
      local function run(id)
        if counts[id] ~= nil then
          return
        end
        for _, dep in ipairs(depends[id] or {}) do
          if providers[dep] then
            run(dep)
            if counts[dep] > 0 then
              counts[id] = -1 -- not asked
              return
            end
          end
        end
        local p = providers[id]
        p:get_completions(ctx, function(r)
          _G.fake_blink.calls = _G.fake_blink.calls + 1
          counts[id] = #r.items
          for _, item in ipairs(r.items) do
            table.insert(menu, item.textEdit.newText)
          end
          local triggers = p.get_trigger_characters and p:get_trigger_characters() or {}
          if char and #r.items > 0 and vim.tbl_contains(triggers, char) then
            from_trigger = true
          end
        end)
      end
      for _, id in ipairs(ids) do
        run(id)
      end
      table.sort(menu)
      _G.fake_blink.menu = (not char or from_trigger) and menu or nil
    end
    _G.fake_blink.show = show
    local typed
    vim.api.nvim_create_autocmd('InsertCharPre', {
      callback = function()
        typed = vim.v.char
      end,
    })
    vim.api.nvim_create_autocmd('TextChangedI', {
      callback = function()
        local c = typed
        typed = nil
        if not c or vim.b.completion == false then
          return
        end
        local triggers = {}
        for _, p in pairs(enabled()) do
          if p.get_trigger_characters then
            vim.list_extend(triggers, p:get_trigger_characters())
          end
        end
        if vim.tbl_contains(triggers, c) and not c:match('%a') and not c:match('%s') then
          show(c)
        elseif keyword(c) then
          show(nil)
        else
          _G.fake_blink.menu = nil
        end
      end,
    })
    return {}
  end
end

function M.cmp_complete(before)
  local source = _G.fake_cmp.sources.sightline
  -- nvim-cmp's cmp.SourceCompletionApiParams: offset and a cmp.Context
  local params = {
    offset = #before,
    context = {
      bufnr = 0,
      cursor_before_line = before,
      cursor_line = before,
      cursor = { row = 1, col = #before + 1, line = 0 },
    },
    completion_context = { triggerKind = 2, triggerCharacter = '@' },
  }
  local response
  source:complete(params, function(r)
    response = r
  end)
  return {
    response = response,
    available = source:is_available(),
    pattern = source:get_keyword_pattern(),
    triggers = source:get_trigger_characters(),
    encoding = source:get_position_encoding_kind(),
  }
end

function M.cmp_keyword_at_end(text)
  local pattern = _G.fake_cmp.sources.sightline:get_keyword_pattern()
  return vim.fn.matchstr(text, '\\%(' .. pattern .. '\\)$')
end

function M.blink_complete(line, keyword_start)
  local blink = require('sightline.complete.blink')
  local source = blink.new({})
  -- blink.cmp's context: 1-based row, 0-based byte column, the keyword's bounds
  local bounds = { line_number = 1, start_col = keyword_start, length = #line - keyword_start + 1 }
  local ctx = { bufnr = 0, line = line, cursor = { 1, #line }, bounds = bounds }
  local response
  local cancel = source:get_completions(ctx, function(r)
    response = r
  end)
  return {
    response = response,
    enabled = source:enabled(),
    triggers = source:get_trigger_characters(),
    cancel = type(cancel),
  }
end

return M
