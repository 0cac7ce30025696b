---@mod sightline.complete.cmp  `@` mentions as an nvim-cmp source (registered when nvim-cmp
---completes in the composer; never a dependency).
local M = {}

---@class sightline.CmpSource
local source = {}
source.__index = source

---@return sightline.CmpSource
function M.new()
  return setmetatable({}, source)
end

function source:get_debug_name()
  return 'sightline'
end

---Only the composer has `@` mentions.
function source:is_available()
  return vim.b.sightline_role == 'composer'
end

---`@` and every mark a path or `ext:` holds (see complete.TRIGGERS).
function source:get_trigger_characters()
  return require('sightline.complete').TRIGGERS
end

---The whole token from its `@` (escaped characters included), or a `/` command from the
---line's start, is what cmp matches, so the menu starts at the `@` or `/` and cmp's own
---filter sees what the core saw; after an MCP prompt's name, the argument being typed (cmp
---opens its menu only where this pattern matches the text before the cursor).
function source:get_keyword_pattern()
  return [[\%(^/\S*\|@\%(\\.\|[^[:space:]\\]\)*\|\%(^/mcp:\S*\s.*\)\@<=[^[:space:]=]*\)]]
end

---Columns in the items' textEdit are byte columns.
function source:get_position_encoding_kind()
  return 'utf-8'
end

---@param params { context: { cursor_before_line: string, cursor: { row: integer } } }
---@param callback fun(response: { items: lsp.CompletionItem[], isIncomplete: boolean })
function source:complete(params, callback)
  local complete = require('sightline.complete')
  local before = params.context.cursor_before_line
  local row = params.context.cursor.row - 1
  local start, items, _, refresh_ms = complete.query(before, false, row)
  if start < 0 then
    return callback({ items = {}, isIncomplete = true })
  end
  -- isIncomplete: every keystroke asks again; the core narrows from the last one.
  callback({
    items = complete.lsp_items(items, row, start, #before, before:sub(start + 1)),
    isIncomplete = true,
  })
  local cmp = package.loaded['cmp']
  if refresh_ms and type(cmp) == 'table' then
    -- More is on its way (MCP servers starting): cmp.complete() asks the sources again.
    complete.refresh_later(refresh_ms, before, function()
      return cmp.visible()
    end, function()
      cmp.complete()
    end)
  end
end

---Register the source and make it the composer's first source group, in the core's order
---(the user's own sources stay as a fallback group).
---@param cmp table the nvim-cmp module
---@param buf integer the composer
function M.register(cmp, buf)
  if not M.id then
    M.id = cmp.register_source('sightline', M.new())
  end
  vim.api.nvim_buf_call(buf, function()
    local sources = { { name = 'sightline', group_index = 1 } }
    local current = cmp.get_config and cmp.get_config().sources or {}
    for _, s in ipairs(current) do
      if s.name ~= 'sightline' then
        table.insert(sources, vim.tbl_extend('force', s, { group_index = (s.group_index or 1) + 1 }))
      end
    end
    cmp.setup.buffer({
      sources = sources,
      sorting = { comparators = { cmp.config.compare.order } },
      -- The source preselects its best item; this composer honours that whatever the
      -- user's own `preselect` says (the help promises the best item preselected).
      preselect = cmp.PreselectMode and cmp.PreselectMode.Item or nil,
    })
  end)
end

return M
