--- Resolve a member key (`name` or `Outer.name`) and a syntax scope (steps `{kind,
--- index_in_parent}`) to the lines they cover *now*, so a reveal still lands after the code
--- moved. Sources in order: LSP document symbols (members only), tree-sitter, and for Python
--- buffers the caller's own `ast` resolution (opts.python; Neovim ships no Python parser).
local M = {}

M.KINDS = require('sightline.config').SYNTAX_SCOPE_KINDS -- the config schema's list

---@class sightline.SyntaxStep
---@field kind string
---@field index_in_parent integer 0-based

---@class sightline.ResolveOpts
---@field member_key? string
---@field syntax_scope? sightline.SyntaxStep[]
---@field near_line? integer several matches → the one nearest this line
---@field name? string file name for messages
---@field python? table the caller's Python resolution: {start_line, end_line} or {error, partial?}

---@class sightline.LineRange 1-based, inclusive lines
---@field start_line integer
---@field end_line integer

--- Validate and normalise a syntax_scope (a list, or its JSON text). nil/empty → nil.
---@param v any
---@return sightline.SyntaxStep[]?, string?
function M.check_syntax_scope(v)
  if v == nil or v == vim.NIL then
    return nil
  end
  if type(v) == 'string' then
    local ok, decoded = pcall(vim.json.decode, v)
    if not ok then
      return nil, 'syntax_scope is not valid JSON'
    end
    v = decoded
  end
  if type(v) ~= 'table' or (next(v) ~= nil and not vim.islist(v)) then
    return nil, 'syntax_scope must be a list of {kind, index_in_parent} steps'
  end
  local out = {}
  for i, step in ipairs(v) do
    local kind = type(step) == 'table' and step.kind
    local idx = type(step) == 'table' and step.index_in_parent
    if not vim.tbl_contains(M.KINDS, kind) then
      return nil,
        ('syntax_scope step %d: kind must be one of %s, got %s'):format(
          i,
          table.concat(M.KINDS, ', '),
          vim.inspect(kind)
        )
    end
    if type(idx) ~= 'number' or idx ~= math.floor(idx) or idx < 0 then
      return nil,
        ('syntax_scope step %d: index_in_parent must be a whole number ≥ 0, got %s'):format(i, vim.inspect(idx))
    end
    out[i] = { kind = kind, index_in_parent = math.floor(idx) }
  end
  return #out > 0 and out or nil
end

--- Resolve member_key / syntax_scope in buf. Returns the range; or nil, what failed and,
--- when the member resolved but its syntax_scope did not, the member's range.
---@param buf integer
---@param opts sightline.ResolveOpts
---@return sightline.LineRange?, string?, sightline.LineRange?
function M.resolve(buf, opts)
  if opts.member_key and not opts.syntax_scope then
    local found = require('sightline.resolve.lsp').members(buf, opts.member_key)
    if found then
      return require('sightline.resolve.match').nearest(found, opts.near_line)
    end
  end
  local ts = require('sightline.resolve.treesitter')
  local root, lang = ts.root(buf)
  if root then
    local r, err, partial = ts.resolve(root, lang, buf, opts)
    return r, not r and err or nil, not r and partial or nil
  end
  local py = opts.python
  if type(py) == 'table' then
    -- Resolved by the caller (the core or the MCP server) with its `ast`: Neovim ships no
    -- Python parser, and no Lua the core calls may call the core back.
    if type(py.start_line) == 'number' and type(py.end_line) == 'number' then
      return { start_line = py.start_line, end_line = py.end_line }
    end
    local partial = type(py.partial) == 'table' and py.partial or nil
    local err = tostring(py.error or 'the Python resolver gave no range'):gsub('the file', opts.name or 'the file')
    return nil, err, partial
  end
  local what = opts.member_key and ("member_key '%s'"):format(opts.member_key) or 'syntax_scope'
  return nil,
    ('cannot resolve %s in %s: no LSP symbols and no tree-sitter parser for filetype %q'):format(
      what,
      opts.name or 'the file',
      vim.bo[buf].filetype
    )
end

return M
