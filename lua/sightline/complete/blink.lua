---@mod sightline.complete.blink  `@` mentions as a blink.cmp source (registered when blink.cmp
---completes in the composer; never a dependency). A provider the user configured by hand
---(`sources.providers.sightline`, as the help shows for a blink.cmp without
---`add_source_provider`) is used as it is.
---@class sightline.BlinkSource
local source = {}
source.__index = source

---@param opts table? `sources.providers.sightline.opts` (none are used)
---@return sightline.BlinkSource
function source.new(opts)
  return setmetatable({ opts = opts or {} }, source)
end

---Only the composer has `@` mentions.
function source:enabled()
  return vim.b.sightline_role == 'composer'
end

---`@` and every mark a path or `ext:` holds (see complete.TRIGGERS).
function source:get_trigger_characters()
  return require('sightline.complete').TRIGGERS
end

---@param ctx { line: string, cursor: integer[], bounds: { start_col: integer, length: integer }? }
---@param callback fun(response: { items: lsp.CompletionItem[], is_incomplete_forward: boolean, is_incomplete_backward: boolean })
---@return fun() cancel
function source:get_completions(ctx, callback)
  local complete = require('sightline.complete')
  local before = ctx.line:sub(1, ctx.cursor[2])
  local start, items, _, refresh_ms = complete.query(before, false, ctx.cursor[1] - 1)
  local lsp = {}
  if start >= 0 then
    -- blink matches its keyword (letters, digits, _ and -) at the cursor, not the token.
    local b = ctx.bounds
    local keyword = b and ctx.line:sub(b.start_col, b.start_col + b.length - 1) or before:sub(start + 1)
    lsp = complete.lsp_items(items, ctx.cursor[1] - 1, start, #before, keyword)
  end
  -- Incomplete both ways: every keystroke and backspace asks the core again.
  callback({ items = lsp, is_incomplete_forward = true, is_incomplete_backward = true })
  local blink = package.loaded['blink.cmp']
  if refresh_ms and type(blink) == 'table' and type(blink.show) == 'function' then
    -- More is on its way (MCP servers starting). blink.cmp appends what a source sends
    -- later, so a new list is asked for: show() with providers opens a new context.
    complete.refresh_later(refresh_ms, before, function()
      return blink.is_menu_visible and blink.is_menu_visible() or false
    end, function()
      local current = blink.get_context and blink.get_context()
      blink.show({ providers = current and current.providers or { 'sightline' } })
    end)
  end
  return function() end
end

---`fallbacks` of the provider: every other source enabled here. blink.cmp asks a fallback
---only when the sources it falls back from returned no items, so inside a mention the menu
---holds sightline's items alone (buffer words followed them after `@`), and elsewhere in
---the composer, where this source has none, the others complete as usual.
---@param _ table? blink's context
---@param enabled string[]? the ids of the sources enabled in it
---@return string[]
function source.fallbacks(_, enabled)
  return vim.tbl_filter(function(id)
    return id ~= 'sightline'
  end, enabled or {})
end

source.filetypes = {} ---@type table<string, true> filetypes we listed the provider for

---Register the provider unless the user's configuration has it, and list it for the
---composer's filetype (the source's `enabled()` keeps it out of other buffers of that
---filetype). Throws with what went wrong; the caller tells the user.
---@param blink table the blink.cmp module
---@param buf integer the composer
function source.register(blink, buf)
  -- blink.cmp asserts "Provider with id sightline already exists" on a second add.
  local ok, config = pcall(require, 'blink.cmp.config')
  local providers = ok and type(config) == 'table' and type(config.sources) == 'table' and config.sources.providers
  if not (type(providers) == 'table' and providers.sightline ~= nil) then
    if type(blink.add_source_provider) ~= 'function' then
      error('this blink.cmp lacks add_source_provider: configure the provider, see :help sightline-completion-blink', 0)
    end
    blink.add_source_provider(
      'sightline',
      { name = 'sightline', module = 'sightline.complete.blink', fallbacks = source.fallbacks }
    )
  elseif type(providers.sightline) == 'table' and providers.sightline.fallbacks == nil then
    -- The user's own provider: takes effect unless blink.cmp built it already (the help's
    -- snippet sets it).
    providers.sightline.fallbacks = source.fallbacks
  end
  local ft = vim.bo[buf].filetype
  if type(blink.add_filetype_source) == 'function' and not source.filetypes[ft] then
    blink.add_filetype_source(ft, 'sightline') -- (blink de-duplicates a provider listed twice)
    source.filetypes[ft] = true
  end
end

return source
