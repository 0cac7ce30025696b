--- Members from LSP document symbols. Symbols know nothing of statements, so this source
--- answers member keys only.
local match = require('sightline.resolve.match')

local M = {}

-- A reveal never waits on a server for long (a cold one answers documentSymbol seconds after
-- attaching, and a synchronous wait freezes the editor): it asks asynchronously, waits at most
-- this long for the answer, and otherwise falls back at once. The late answer is kept for the
-- next reveal of the unchanged buffer.
local WAIT_MS = 40

---@type table<string, {tick: integer, done: boolean, result: any, id: integer?}>
local asked = {} -- "client:buf" → the request for one changedtick

---@param r lsp.Range
---@return sightline.LineRange
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
---@return sightline.LineRange[]
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

--- The document symbols of buf from client: the answer for the buffer as it is now, or nil
--- when the server has not answered (yet) within WAIT_MS.
---@return table?
local function symbols(client, buf, method)
  local key, tick = client.id .. ':' .. buf, vim.b[buf].changedtick
  local a = asked[key]
  if not a or a.tick ~= tick then
    if a and not a.done and a.id then
      pcall(client.cancel_request, client, a.id) -- an answer for an older text
    end
    a = { tick = tick, done = false }
    asked[key] = a
    local params = { textDocument = vim.lsp.util.make_text_document_params(buf) }
    local ok, sent, id = pcall(client.request, client, method, params, function(err, result)
      a.done, a.result = true, not err and result or nil
    end, buf)
    if not ok or not sent then
      a.done = true
    end
    a.id = id
  end
  if not a.done and client.initialized then
    -- Runs the event loop: RPC and timers go on; typed keys wait at most WAIT_MS.
    pcall(vim.wait, WAIT_MS, function()
      return a.done
    end, 5)
  end
  return a.done and type(a.result) == 'table' and a.result or nil
end

--- The ranges of the symbols matching key, from the first attached client that has any.
--- Never waits on a server that has not answered its initialisation or is slow.
---@param buf integer
---@param key string
---@return sightline.LineRange[]?
function M.members(buf, key)
  local method = 'textDocument/documentSymbol'
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf, method = method })) do
    local result = symbols(client, buf, method)
    if result then
      local found = match_symbols(result, match.split_key(key))
      if #found > 0 then
        return found
      end
    end
  end
end

return M
