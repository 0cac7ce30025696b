---@mod sightline.complete.blink  `@` mentions as a blink.cmp source (registered only when
---blink.cmp is loaded; never a dependency). Without `add_source_provider` (older
---blink.cmp), add it by hand:
---  sources.providers.sightline = { name = 'sightline', module = 'sightline.complete.blink' }
---and list 'sightline' in `sources.default` (or `per_filetype.markdown`).
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

function source:get_trigger_characters()
  return { '@' }
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

---Register the provider, and for the composer's filetype when blink can (the source's
---`enabled()` keeps it out of other buffers of that filetype). Older versions need the
---manual configuration above.
---@param blink table the blink.cmp module
---@param buf integer the composer
function source.register(blink, buf)
  if type(blink.add_source_provider) == 'function' and not source.registered then
    blink.add_source_provider('sightline', { name = 'sightline', module = 'sightline.complete.blink' })
    source.registered = {}
  end
  local ft = vim.bo[buf].filetype
  if type(blink.add_filetype_source) == 'function' and source.registered and not source.registered[ft] then
    blink.add_filetype_source(ft, 'sightline')
    source.registered[ft] = true
  end
end

return source
