--- What tree-sitter nodes mean, per language, read from query files: which nodes are members
--- (and their names) and which are syntax-scope steps (and their kind). A language's
--- `queries/<lang>/sightline.scm` on the runtimepath says it (captures: @member,
--- @member.name, @member.body, @scope.<kind>, @scope.none); a language without one gets
--- `queries/_generic/sightline.scm`, the patterns of it that its grammar can express.
--- Adding a language is adding a file: no code here knows a node type.
local match = require('sightline.resolve.match')

local M = {}

---@class sightline.Member
---@field names string[] the path of names, outermost first
---@field node TSNode the member's whole range
---@field body TSNode where its syntax_scope steps start

---@type table<string, vim.treesitter.Query|false>
local generic_cache = {}

--- The generic fallback for lang: each line of the generic file that parses for lang.
---@param lang string
---@return vim.treesitter.Query?
local function generic_query(lang)
  if generic_cache[lang] == nil then
    local kept = {}
    for _, file in ipairs(vim.api.nvim_get_runtime_file('queries/_generic/sightline.scm', false)) do
      for line in io.lines(file) do
        if line:match('^%(') and pcall(vim.treesitter.query.parse, lang, line) then
          kept[#kept + 1] = line
        end
      end
    end
    local ok, q = pcall(vim.treesitter.query.parse, lang, table.concat(kept, '\n'))
    generic_cache[lang] = #kept > 0 and ok and q or false
  end
  return generic_cache[lang] or nil
end

--- The sightline query for lang, or nil and why (a query file that does not parse).
---@param lang string
---@return vim.treesitter.Query?, string?
function M.query(lang)
  local ok, q = pcall(vim.treesitter.query.get, lang, 'sightline')
  if not ok then
    -- The message names the file and the position; the first line is enough.
    local msg = tostring(q):gsub('^[^:]*:%d+: ', ''):match('[^\n]*')
    return nil, ('queries/%s/sightline.scm does not parse: %s'):format(lang, msg)
  end
  return q or generic_query(lang)
end

---@type table<string, 'node'|'name'|'body'>
local FIELD = { member = 'node', ['member.name'] = 'name', ['member.body'] = 'body' }

---@param node TSNode
---@return integer
local function width(node)
  local _, _, s = node:start()
  local _, _, e = node:end_()
  return e - s
end

--- Every member under root, each named by its path (the names of the members around it first).
---@param query vim.treesitter.Query
---@param root TSNode
---@param buf integer
---@return sightline.Member[]
function M.members(query, root, buf)
  ---@type table<string, {node: TSNode, body: TSNode, name: TSNode}>
  local by_body = {}
  local order = {}
  for _, found in query:iter_matches(root, buf, 0, -1) do
    local m = {}
    for id, nodes in pairs(found) do
      local field = FIELD[query.captures[id]]
      if field then
        m[field] = nodes[1]
      end
    end
    local node, name = m.node, m.name
    if node and name then
      local body = m.body or node
      local key = body:id()
      local seen = by_body[key]
      -- One member per body: the widest pattern (`local` or decorators included) wins.
      if not seen then
        order[#order + 1] = key
      end
      if not seen or width(node) > width(seen.node) then
        by_body[key] = { node = node, body = body, name = name }
      end
    end
  end
  ---@type table<string, sightline.Member>
  local by_node = {}
  for _, key in ipairs(order) do
    local m = by_body[key]
    by_node[m.node:id()] =
      { names = match.split_key(vim.treesitter.get_node_text(m.name, buf)), node = m.node, body = m.body }
  end
  ---@type table<string, string[]>
  local paths = {}
  ---@param m sightline.Member
  ---@return string[]
  local function path(m)
    local id = m.node:id()
    if not paths[id] then
      local outer = m.node:parent()
      while outer and not by_node[outer:id()] do
        outer = outer:parent()
      end
      paths[id] = vim.list_extend(outer and vim.list_slice(path(by_node[outer:id()])) or {}, m.names)
    end
    return paths[id]
  end
  local out = {}
  for _, key in ipairs(order) do
    local m = by_node[by_body[key].node:id()]
    out[#out + 1] = { names = path(m), node = m.node, body = m.body }
  end
  return out
end

--- The step kind (for, while, if, …) of every step node under root, by node id.
---@param query vim.treesitter.Query
---@param root TSNode
---@param buf integer
---@return table<string, string>
function M.steps(query, root, buf)
  local kinds, unmarked = {}, {}
  for id, node in query:iter_captures(root, buf, 0, -1) do
    local kind = query.captures[id]:match('^scope%.(.+)$')
    if kind == 'none' then
      unmarked[node:id()] = true
    elseif kind then
      kinds[node:id()] = kind
    end
  end
  for id in pairs(unmarked) do
    kinds[id] = nil
  end
  return kinds
end

return M
