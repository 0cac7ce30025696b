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
  local start, items = complete.query(before)
  local lsp = {}
  if start >= 0 then
    -- blink matches its keyword (letters, digits, _ and -) at the cursor, not the token.
    local b = ctx.bounds
    local keyword = b and ctx.line:sub(b.start_col, b.start_col + b.length - 1) or before:sub(start + 1)
    lsp = complete.lsp_items(items, ctx.cursor[1] - 1, start, #before, keyword)
  end
  -- Incomplete both ways: every keystroke and backspace asks the core again.
  callback({ items = lsp, is_incomplete_forward = true, is_incomplete_backward = true })
  return function() end
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
    blink.add_source_provider('sightline', { name = 'sightline', module = 'sightline.complete.blink' })
  end
  local ft = vim.bo[buf].filetype
  if type(blink.add_filetype_source) == 'function' and not source.filetypes[ft] then
    blink.add_filetype_source(ft, 'sightline') -- (blink de-duplicates a provider listed twice)
    source.filetypes[ft] = true
  end
end

return source
