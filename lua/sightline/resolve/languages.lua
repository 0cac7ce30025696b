--- What tree-sitter nodes mean, per language: which are members (and their names) and which
--- are syntax-scope steps (and their kind). Languages without a table here use the generic
--- one, which fits the nvim-treesitter parsers' common node names.
local match = require('sightline.resolve.match')

local M = {}

---@alias sightline.Member {names: string[], node: TSNode, body: TSNode}
---@alias sightline.Describe fun(node: TSNode, buf: integer): sightline.Member?

---@param node TSNode?
---@param field_name string
---@return TSNode?
local function field(node, field_name)
  return node and node:field(field_name)[1]
end

---@param node TSNode?
local function text(node, buf)
  return node and vim.treesitter.get_node_text(node, buf) or nil
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
    return { names = match.split_key(text(field(node, 'name'), buf) or ''), node = node, body = node }
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
    return { names = match.split_key(text(name, buf) or ''), node = whole, body = value }
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

--- The member node describes in lang, if it is one.
---@param lang string
---@return sightline.Describe
function M.describer(lang)
  return DESCRIBE[lang] or describe_generic
end

--- The step kind of node in lang (for, while, if, …), if it is a step.
---@param node TSNode
---@param lang string
---@return string?
function M.kind_of(node, lang)
  local k = (KIND_OF[lang] or KIND_OF.generic)[node:type()]
  if type(k) == 'function' then
    return k(node)
  end
  return k
end

return M
