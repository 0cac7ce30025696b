--- Resolve a member key (`name` or `Outer.name`) and a syntax scope (steps `{kind,
--- index_in_parent}`) to the lines they cover *now*, so a reveal still lands after the code
--- moved. Sources in order: LSP document symbols (members only), tree-sitter, and for Python
--- buffers the core's `ast` (Neovim ships no Python parser).
local api = vim.api

local M = {}

M.KINDS = { 'for', 'while', 'if', 'switch', 'try', 'block', 'function' }
local LSP_TIMEOUT_MS = 500

---@class sightline.ScopeStep
---@field kind string
---@field index_in_parent integer 0-based

---@class sightline.ResolveOpts
---@field member_key? string
---@field syntax_scope? sightline.ScopeStep[]
---@field near_line? integer several matches → the one nearest this line
---@field name? string file name for messages

---@class sightline.Range
---@field start_line integer
---@field end_line integer

--- Validate and normalise a syntax_scope (a list, or its JSON text). nil/empty → nil.
---@param v any
---@return sightline.ScopeStep[]?, string?
function M.check_scope(v)
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
        ('syntax_scope step %d: kind must be one of %s, got %s'):format(i, table.concat(M.KINDS, ', '), vim.inspect(kind))
    end
    if type(idx) ~= 'number' or idx ~= math.floor(idx) or idx < 0 then
      return nil, ('syntax_scope step %d: index_in_parent must be a whole number ≥ 0, got %s'):format(i, vim.inspect(idx))
    end
    out[i] = { kind = kind, index_in_parent = math.floor(idx) }
  end
  return #out > 0 and out or nil
end

---@param key string
---@return string[]
local function split_key(key)
  local parts = {}
  for p in key:gmatch('[^.:%s]+') do
    parts[#parts + 1] = p
  end
  return parts
end

--- Does path end with the key's components?
---@param path string[]
---@param parts string[]
---@return boolean
local function suffix_match(path, parts)
  if #parts == 0 or #parts > #path then
    return false
  end
  for i = 1, #parts do
    if path[#path - #parts + i] ~= parts[i] then
      return false
    end
  end
  return true
end

---@param candidates sightline.Range[]
---@param near integer?
---@return sightline.Range?
local function nearest(candidates, near)
  local best, dist = nil, math.huge
  for _, c in ipairs(candidates) do
    local d = near and math.abs(c.start_line - near) or 0
    if d < dist then
      best, dist = c, d
    end
  end
  return best
end

-- ---------------------------------------------------------------------------------------------
-- LSP document symbols (members only: symbols know nothing of statements)

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
  return split_key((name:match('^[^(%s]+') or name))
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
        p = vim.list_extend(split_key(sym.containerName), p)
      end
      if suffix_match(p, parts) then
        out[#out + 1] = lsp_range(sym.range or sym.location.range)
      end
      walk(sym.children or {}, p)
    end
  end
  walk(result, {})
  return out
end

---@return sightline.Range[]?
local function lsp_members(buf, key)
  local method = 'textDocument/documentSymbol'
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf, method = method })) do
    local params = { textDocument = vim.lsp.util.make_text_document_params(buf) }
    local resp = client:request_sync(method, params, LSP_TIMEOUT_MS, buf)
    if resp and type(resp.result) == 'table' then
      local found = match_symbols(resp.result, split_key(key))
      if #found > 0 then
        return found
      end
    end
  end
end

-- ---------------------------------------------------------------------------------------------
-- tree-sitter

---@param node TSNode
---@return sightline.Range
local function node_range(node)
  local sr, _, er, ec = node:range()
  if ec == 0 and er > sr then
    er = er - 1
  end
  return { start_line = sr + 1, end_line = er + 1 }
end

---@param node TSNode?
---@param field string
---@return TSNode?
local function field(node, field_name)
  return node and node:field(field_name)[1]
end

--- C declarators nest (pointer → function → identifier); the name is at the bottom.
---@param node TSNode?
---@return TSNode?
local function c_declarator_name(node)
  while node and node:type() ~= 'identifier' and node:type() ~= 'field_identifier' and node:type() ~= 'type_identifier' do
    node = field(node, 'declarator')
  end
  return node
end

---@alias sightline.Member {names: string[], node: TSNode, body: TSNode}
---@alias sightline.Describe fun(node: TSNode, buf: integer): sightline.Member?

---@param node TSNode?
local function text(node, buf)
  return node and vim.treesitter.get_node_text(node, buf) or nil
end

---@type table<string, sightline.Describe>
local DESCRIBE = {}

function DESCRIBE.c(node, buf)
  local t = node:type()
  local name
  if t == 'function_definition' or t == 'field_declaration' or t == 'type_definition' then
    name = c_declarator_name(field(node, 'declarator'))
  elseif (t == 'struct_specifier' or t == 'union_specifier' or t == 'enum_specifier') and field(node, 'body') then
    name = field(node, 'name')
  elseif t == 'enumerator' or t == 'preproc_function_def' or t == 'preproc_def' then
    name = field(node, 'name')
  end
  if name then
    return { names = { text(name, buf) }, node = node, body = node }
  end
end

function DESCRIBE.lua(node, buf)
  local t = node:type()
  if t == 'function_declaration' then
    return { names = split_key(text(field(node, 'name'), buf) or ''), node = node, body = node }
  end
  local name, value
  if t == 'assignment_statement' then
    local vars, vals = node:named_child(0), node:named_child(1)
    if vars and vals and vars:named_child_count() == 1 and vals:named_child_count() == 1 then
      name, value = vars:named_child(0), vals:named_child(0)
    end
  elseif t == 'field' then
    name, value = field(node, 'name'), field(node, 'value')
  end
  if name and value and (value:type() == 'function_definition' or value:type() == 'table_constructor') then
    local parent = node:parent()
    -- `local x = …` wraps the assignment: the range includes `local`.
    local whole = parent and parent:type() == 'variable_declaration' and parent or node
    return { names = split_key(text(name, buf) or ''), node = whole, body = value }
  end
end

local GENERIC_MEMBERS = {
  function_definition = true, function_declaration = true, function_item = true,
  method_definition = true, method_declaration = true, class_definition = true,
  class_declaration = true, class_specifier = true, struct_item = true, enum_item = true,
  trait_item = true, interface_declaration = true, namespace_definition = true, module = true,
}

--- Other languages (nvim-treesitter parsers): definitions with a `name` field.
---@type sightline.Describe
local function describe_generic(node, buf)
  local name = GENERIC_MEMBERS[node:type()] and field(node, 'name')
  if not name then
    return nil
  end
  local parent = node:parent()
  local whole = parent and parent:type() == 'decorated_definition' and parent or node
  return { names = { text(name, buf) }, node = whole, body = node }
end

local function kind_c_if(node)
  local parent = node:parent()
  -- `else if` continues the outer if, as `elif` does in Python and `elseif` in Lua.
  return not (parent and parent:type() == 'else_clause') and 'if' or nil
end

local function kind_c_block(node)
  local parent = node:parent()
  -- Only a free-standing `{ … }`; the bodies of for/if/functions are not steps.
  local pt = parent and parent:type()
  return (pt == 'compound_statement' or pt == 'case_statement') and 'block' or nil
end

---@type table<string, table<string, string|fun(node: TSNode): string?>>
local KIND_OF = {
  c = {
    for_statement = 'for', while_statement = 'while', do_statement = 'while',
    if_statement = kind_c_if, switch_statement = 'switch', compound_statement = kind_c_block,
    function_definition = 'function',
  },
  lua = {
    for_statement = 'for', while_statement = 'while', repeat_statement = 'while',
    if_statement = 'if', do_statement = 'block', function_declaration = 'function',
    function_definition = 'function',
  },
  python = {
    for_statement = 'for', while_statement = 'while', if_statement = 'if',
    match_statement = 'switch', try_statement = 'try', with_statement = 'block',
    function_definition = 'function',
    decorated_definition = function(node)
      local def = field(node, 'definition')
      return def and def:type() == 'function_definition' and 'function' or nil
    end,
  },
  generic = {
    for_statement = 'for', for_in_statement = 'for', foreach_statement = 'for',
    enhanced_for_statement = 'for', for_range_loop = 'for', for_expression = 'for',
    while_statement = 'while', do_statement = 'while', while_expression = 'while',
    loop_expression = 'while', if_statement = 'if', if_expression = 'if',
    switch_statement = 'switch', switch_expression = 'switch', match_statement = 'switch',
    match_expression = 'switch', try_statement = 'try', try_expression = 'try',
    function_definition = 'function', function_declaration = 'function', function_item = 'function',
    method_definition = 'function', method_declaration = 'function',
  },
}
KIND_OF.cpp = vim.tbl_extend('force', KIND_OF.c, { try_statement = 'try', for_range_loop = 'for' })

---@return string?
local function kind_of(node, lang)
  local k = (KIND_OF[lang] or KIND_OF.generic)[node:type()]
  if type(k) == 'function' then
    return k(node)
  end
  return k
end

--- Statements of a step kind whose nearest step-kind ancestor is root, in document order.
---@param root TSNode
---@return {kind: string, node: TSNode}[]
local function direct_steps(root, lang)
  local out = {}
  local function walk(node)
    for child in node:iter_children() do
      if child:named() then
        local k = kind_of(child, lang)
        if k then
          out[#out + 1] = { kind = k, node = child }
        else
          walk(child)
        end
      end
    end
  end
  walk(root)
  return out
end

---@return sightline.Member[]
local function ts_members(root, buf, lang)
  local describe = DESCRIBE[lang] or describe_generic
  local out = {}
  local function walk(node, path)
    for child in node:iter_children() do
      if child:named() then
        local m = describe(child, buf)
        if m then
          m.names = vim.list_extend(vim.list_slice(path), m.names)
          out[#out + 1] = m
        end
        walk(child, m and m.names or path)
      end
    end
  end
  walk(root, {})
  return out
end

--- Follow the steps down from root.
---@return TSNode?, string?
local function follow_scope(root, lang, steps, where)
  local node = root
  for i, step in ipairs(steps) do
    local matching = vim.tbl_filter(function(s)
      return s.kind == step.kind
    end, direct_steps(node, lang))
    local hit = matching[step.index_in_parent + 1]
    if not hit then
      return nil,
        ('syntax_scope step %d (%s #%d) not found in %s: it has %d such statement(s)'):format(
          i, step.kind, step.index_in_parent, where, #matching)
    end
    node = hit.node
  end
  return node
end

---@param buf integer
---@return TSNode?, string? lang
local function ts_root(buf)
  local ok, parser = pcall(vim.treesitter.get_parser, buf, nil, { error = false })
  if not ok or not parser then
    return nil
  end
  local trees = parser:parse()
  return trees[1] and trees[1]:root(), parser:lang()
end

--- The range, or nil, what failed and (when only the scope failed) the member's range.
---@param opts sightline.ResolveOpts
---@return sightline.Range?, string?, sightline.Range?
local function ts_resolve(root, lang, buf, opts)
  local roots = { { node = root, body = root, where = opts.name or 'the file' } }
  if opts.member_key then
    local parts = split_key(opts.member_key)
    roots = {}
    for _, m in ipairs(ts_members(root, buf, lang)) do
      if suffix_match(m.names, parts) then
        roots[#roots + 1] = { node = m.node, body = m.body, where = table.concat(m.names, '.') }
      end
    end
    if #roots == 0 then
      return nil, ("member_key '%s' not found in %s"):format(opts.member_key, opts.name or 'the file')
    end
  end
  local found, members, first_err = {}, {}, nil
  for _, r in ipairs(roots) do
    local node, err = r.node, nil
    if opts.syntax_scope then
      node, err = follow_scope(r.body, lang, opts.syntax_scope, r.where)
    end
    if node then
      found[#found + 1] = node_range(node)
    end
    members[#members + 1] = node_range(r.node)
    first_err = first_err or err
  end
  local partial = opts.member_key and nearest(members, opts.near_line) or nil
  return nearest(found, opts.near_line), first_err, partial
end

-- ---------------------------------------------------------------------------------------------
-- Python through the core

---@param opts sightline.ResolveOpts
---@return sightline.Range?, string?
local function python_resolve(buf, opts)
  local ok, host = pcall(require, 'sightline.host')
  if not ok or type(host) ~= 'table' or type(host.request) ~= 'function' then
    return nil, 'the Python resolver needs the sightline core, which is not available'
  end
  local params = {
    text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n'),
    member_key = opts.member_key,
    syntax_scope = opts.syntax_scope,
    near_line = opts.near_line,
  }
  local ok2, res, err = pcall(host.request, 'resolve.python', params)
  if not ok2 then
    return nil, tostring(res)
  end
  if type(res) ~= 'table' or type(res.start_line) ~= 'number' or type(res.end_line) ~= 'number' then
    return nil, tostring(err or 'the Python resolver gave no range')
  end
  return { start_line = res.start_line, end_line = res.end_line }
end

---@return boolean
local function is_python(buf)
  return vim.bo[buf].filetype == 'python' or api.nvim_buf_get_name(buf):match('%.pyi?$') ~= nil
end

--- Resolve member_key / syntax_scope in buf. Returns the range; or nil, what failed and,
--- when the member resolved but its syntax_scope did not, the member's range.
---@param buf integer
---@param opts sightline.ResolveOpts
---@return sightline.Range?, string?, sightline.Range?
function M.resolve(buf, opts)
  local name = opts.name or 'the file'
  if opts.member_key and not opts.syntax_scope then
    local found = lsp_members(buf, opts.member_key)
    if found then
      return nearest(found, opts.near_line)
    end
  end
  local root, lang = ts_root(buf)
  if root then
    local r, err, partial = ts_resolve(root, lang, buf, opts)
    return r, not r and err or nil, not r and partial or nil
  end
  if is_python(buf) then
    local r, err = python_resolve(buf, opts)
    if r then
      return r
    end
    local partial
    if opts.member_key and opts.syntax_scope then
      partial = python_resolve(buf, { member_key = opts.member_key, near_line = opts.near_line })
    end
    return nil, (tostring(err):gsub('the file', name)), partial
  end
  local what = opts.member_key and ("member_key '%s'"):format(opts.member_key) or 'syntax_scope'
  return nil,
    ('cannot resolve %s in %s: no LSP symbols and no tree-sitter parser for filetype %q'):format(
      what, name, vim.bo[buf].filetype)
end

return M
