--- Members from LSP document symbols. Symbols know nothing of statements, so this source
--- answers member keys only.
local match = require('sightline.resolve.match')

local M = {}

local TIMEOUT_MS = 500

---@param r lsp.Range
---@return sightline.Range
local function lsp_range(r)
  local last = r['end'].line
  if r['end'].character == 0 and last > r.start.line then
    last = last - 1
  end
  return { start_line = r.start.line + 1, end_line = last + 1 }
end

--- Symbol names may carry a signature ("f(x)") or a dotted owner ("M.f").
---@param name string
---@return string[]
local function symbol_parts(name)
  return match.split_key((name:match('^[^(%s]+') or name))
end

---@param result table DocumentSymbol[] | SymbolInformation[]
---@param parts string[]
---@return sightline.Range[]
local function match_symbols(result, parts)
  local out = {}
  local function walk(symbols, path)
    for _, sym in ipairs(symbols) do
      local p = vim.list_extend(vim.list_slice(path), symbol_parts(sym.name or ''))
      if sym.location and sym.containerName and sym.containerName ~= '' then
        p = vim.list_extend(match.split_key(sym.containerName), p)
      end
      if match.suffix_match(p, parts) then
        out[#out + 1] = lsp_range(sym.range or sym.location.range)
      end
      walk(sym.children or {}, p)
    end
  end
  walk(result, {})
  return out
end

--- The ranges of the symbols matching key, from the first attached client that has any.
---@param buf integer
---@param key string
---@return sightline.Range[]?
function M.members(buf, key)
  local method = 'textDocument/documentSymbol'
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf, method = method })) do
    local params = { textDocument = vim.lsp.util.make_text_document_params(buf) }
    local resp = client:request_sync(method, params, TIMEOUT_MS, buf)
    if resp and type(resp.result) == 'table' then
      local found = match_symbols(resp.result, match.split_key(key))
      if #found > 0 then
        return found
      end
    end
  end
end

return M
