--- Resolving with tree-sitter: find the members named by the key, then follow the syntax
--- scope's steps down from each, and keep the match nearest the given line.
local languages = require('sightline.resolve.languages')
local match = require('sightline.resolve.match')

local M = {}

---@param node TSNode
---@return sightline.LineRange
local function node_range(node)
  local sr, _, er, ec = node:range()
  if ec == 0 and er > sr then
    er = er - 1
  end
  return { start_line = sr + 1, end_line = er + 1 }
end

--- Statements of a step kind whose nearest step-kind ancestor is root, in document order.
---@param root TSNode
---@param kinds table<string, string> step kinds by node id
---@return {kind: string, node: TSNode}[]
local function direct_steps(root, kinds)
  local out = {}
  local function walk(node)
    for child in node:iter_children() do
      if child:named() then
        local k = kinds[child:id()]
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

--- Follow the steps down from root.
---@return TSNode?, string?
---@param root TSNode
---@param kinds table<string, string>
---@param steps sightline.SyntaxStep[]
---@param where string
local function follow_syntax_scope(root, kinds, steps, where)
  local node = root
  for i, step in ipairs(steps) do
    local matching = vim.tbl_filter(function(s)
      return s.kind == step.kind
    end, direct_steps(node, kinds))
    local hit = matching[step.index_in_parent + 1]
    if not hit then
      return nil,
        ('syntax_scope step %d (%s #%d) not found in %s: it has %d such statement(s)'):format(
          i,
          step.kind,
          step.index_in_parent,
          where,
          #matching
        )
    end
    node = hit.node
  end
  return node
end

--- The root of buf's syntax tree, when a parser is available.
---@param buf integer
---@return TSNode?, string? lang
function M.root(buf)
  local ok, parser = pcall(vim.treesitter.get_parser, buf, nil, { error = false })
  if not ok or not parser then
    return nil
  end
  local trees = parser:parse()
  return trees[1] and trees[1]:root(), parser:lang()
end

--- The range, or nil, what failed and (when only the syntax scope failed) the member's range.
---@param root TSNode
---@param lang string
---@param buf integer
---@param opts sightline.ResolveOpts
---@return sightline.LineRange?, string?, sightline.LineRange?
function M.resolve(root, lang, buf, opts)
  local query, qerr = languages.query(lang)
  if not query then
    local what = opts.member_key and ("member_key '%s'"):format(opts.member_key) or 'syntax_scope'
    return nil,
      qerr
        or ('cannot resolve %s in %s: no queries/%s/sightline.scm on the runtimepath says what its members and steps are'):format(
          what,
          opts.name or 'the file',
          lang
        )
  end
  local roots = { { node = root, body = root, where = opts.name or 'the file' } }
  if opts.member_key then
    local parts = match.split_key(opts.member_key)
    roots = {}
    for _, m in ipairs(languages.members(query, root, buf)) do
      if match.suffix_match(m.names, parts) then
        roots[#roots + 1] = { node = m.node, body = m.body, where = table.concat(m.names, '.') }
      end
    end
    if #roots == 0 then
      return nil, ("member_key '%s' not found in %s"):format(opts.member_key, opts.name or 'the file')
    end
  end
  local found, member_ranges, first_err, kinds = {}, {}, nil, nil
  for _, r in ipairs(roots) do
    local node, err = r.node, nil
    if opts.syntax_scope then
      kinds = kinds or languages.steps(query, root, buf)
      node, err = follow_syntax_scope(r.body, kinds, opts.syntax_scope, r.where)
    end
    if node then
      found[#found + 1] = node_range(node)
    end
    member_ranges[#member_ranges + 1] = node_range(r.node)
    first_err = first_err or err
  end
  local partial = opts.member_key and match.nearest(member_ranges, opts.near_line) or nil
  return match.nearest(found, opts.near_line), first_err, partial
end

return M
