-- Fuzz programs run whole inside the child: every bad value in every position, one round trip.
-- Called in a child Neovim as lua_helper(nv, 'fuzz.<function>', ...) (tests/lua_helper.py).
local M = {}
local bad_values = require('bad_values')

-- The valid value for each parameter position, so a bad value can be put in one position at a
-- time. A function missing here is still called with each bad value as its only argument.
function M.api()
  local BAD = bad_values.values()
  local sl = require('sightline')
  local VALID = {
    send = { 'hello', nil },
    decide = { 'accept', 'why' },
    change = { nil },
    reveal = { { file_path = 'x.txt', start_line = 1 } },
    go_to_position = { { file_path = 'x.txt', line = 1 } },
    plan = { 'on' },
    autoaccept = { 'on' },
    open_conversation = { 'x.jsonl' },
  }
  -- What a value may legitimately be in a position (then the call is not a refusal case).
  local function acceptable(name, pos, value)
    if name == 'send' and pos == 1 then
      return type(value) == 'string' -- the core refuses an empty one (test_pane)
    elseif name == 'send' or name == 'change' then
      return value == nil or (type(value) == 'table' and next(value) == nil)
    elseif name == 'decide' and pos == 2 then
      return value == nil or type(value) == 'string'
    elseif name == 'plan' or name == 'autoaccept' then
      return value == nil or type(value) == 'boolean'
    elseif name == 'open_conversation' then
      return type(value) == 'string' and value ~= '' and not value:find('%z') and #value < 4096
    end
    return false
  end
  local names, out, calls = {}, {}, 0
  for name, fn in pairs(sl) do
    if type(fn) == 'function' and name:sub(1, 1) ~= '_' and name ~= 'setup' then
      names[#names + 1] = name
    end
  end
  table.sort(names)
  for _, name in ipairs(names) do
    local valid = VALID[name] or {}
    for pos = 1, math.max(1, #valid) do
      for _, v in ipairs(BAD) do
        if not acceptable(name, pos, v[2]) then
          local args = vim.deepcopy(valid)
          args[pos] = v[2]
          calls = calls + 1
          local res = vim.F.pack_len(pcall(sl[name], unpack(args, 1, math.max(pos, #valid))))
          local bad
          if not res[1] then
            bad = 'raised ' .. tostring(res[2]):sub(1, 200)
          elseif name == 'reveal' or name == 'go_to_position' then
            bad = type(res[2]) ~= 'string' and 'answered ' .. type(res[2])
              or vim.startswith(res[2], 'OK') and 'accepted'
              or bad_values.leak(res[2])
          elseif res[2] ~= nil then
            bad = 'accepted (' .. vim.inspect(res[2]) .. ')'
          else
            bad = bad_values.leak(res[3])
          end
          if bad then
            out[#out + 1] = ('%s arg %d = %s: %s'):format(name, pos, v[1], bad)
          end
        end
      end
    end
  end
  return { names = names, problems = out, calls = calls }
end

-- Each subcommand with bad arguments, typed as a user types them (`:Sightline …`).
function M.commands()
  local words = {
    'x',
    'maybe',
    '-1',
    '1e309',
    'nan',
    '%',
    '#',
    '"',
    "'",
    '\\',
    '<CR>',
    '{}',
    '--member',
    '--duration abc',
    ('y'):rep(5000),
    'a b c d e f g h',
  }
  local names = require('sightline.commands').names()
  table.insert(names, 'nonexistent')
  local out, calls = {}, 0
  for _, name in ipairs(names) do
    for _, w in ipairs(words) do
      _G.sightline_test_notes = {}
      calls = calls + 1
      local ok, err = pcall(vim.cmd, 'Sightline ' .. name .. ' ' .. w)
      local bad = not ok and ('raised ' .. tostring(err):sub(1, 200)) or nil
      for _, note in ipairs(_G.sightline_test_notes) do
        bad = bad or bad_values.leak(note.msg)
      end
      if bad then
        out[#out + 1] = (':Sightline %s %s: %s'):format(name, w:sub(1, 20), bad)
      end
    end
  end
  return { problems = out, calls = calls }
end

function M.setup_each_bad_value()
  local BAD = bad_values.values()
  local sl, config = require('sightline'), require('sightline.config')
  local out = {}
  for _, v in ipairs(BAD) do
    local label, value = v[1], v[2]
    local before = vim.deepcopy(config.get())
    local ok, res, err = pcall(sl.setup, value)
    local bad
    if not ok then
      bad = 'threw: ' .. tostring(res)
    elseif value == nil or (type(value) == 'table' and next(value) == nil) then
      bad = res ~= true and 'refused a valid call: ' .. tostring(err) or nil
    elseif res ~= nil then
      -- Tables of unknown keys are accepted with a warning; anything else must be refused.
      bad = type(value) ~= 'table' and 'accepted' or nil
    elseif type(value) ~= 'table' and not err:find('^sightline: expected a table of options, got ') then
      bad = 'unclear: ' .. err
    else
      bad = bad_values.leak(err)
      if not bad and not vim.deep_equal(config.get(), before) then
        bad = 'a refused setup() changed the config'
      end
    end
    if bad then
      out[#out + 1] = label .. ': ' .. bad
    end
    sl.setup({ provider = { name = 'echo' } })
  end
  return out
end

-- Every leaf of the schema, given every bad value: refused naming its path (config unchanged),
-- or accepted and then exactly what the config holds.
function M.each_leaf()
  local BAD = bad_values.values()
  local sl, config = require('sightline'), require('sightline.config')
  local leaves = {}
  local entry_of = {} -- leaf path → the map entry it belongs to (mcp.servers.<name>)
  local function walk(node, path, in_map)
    for key, sub in pairs(node) do
      local here = vim.list_extend(vim.deepcopy(path), { key })
      if sub.map_of then
        -- A map of names the user chooses: each entry's fields, under one sample name.
        walk(sub.map_of, vim.list_extend(here, { 'sample' }), true)
      elseif sub[1] ~= nil then
        leaves[#leaves + 1] = here
        entry_of[#leaves] = in_map or nil
      else
        walk(sub, here, in_map)
      end
    end
  end
  walk(config.schema, {})
  local out = {}
  for index, keys in ipairs(leaves) do
    local dotted = 'sightline.' .. table.concat(keys, '.')
    local field = keys[#keys]
    for _, v in ipairs(BAD) do
      -- nil (unset) leaves a map entry without command or url: refused as a whole entry.
      if entry_of[index] and v[2] == nil then
        goto next_value
      end
      local opts = {}
      local node = opts
      for i = 1, #keys - 1 do
        node[keys[i]] = {}
        node = node[keys[i]]
      end
      if entry_of[index] and field ~= 'command' and field ~= 'url' then
        node.command = 'server' -- an entry needs a command or a url to be whole
      end
      node[field] = v[2]
      sl.setup({})
      local before = vim.deepcopy(config.get())
      local ok, res, err = pcall(sl.setup, opts)
      local bad
      if not ok then
        bad = 'threw ' .. tostring(res)
      elseif res then
        local got = vim.tbl_get(config.get(), unpack(keys))
        if v[2] ~= nil and not vim.deep_equal(got, v[2]) then
          bad = 'accepted but holds ' .. vim.inspect(got)
        end
      elseif not vim.startswith(err, dotted .. ': expected ') then
        bad = 'message does not name the path: ' .. err
      else
        bad = bad_values.leak(err)
        if not bad and not vim.deep_equal(config.get(), before) then
          bad = 'a refused setup() changed the config'
        end
      end
      if bad then
        out[#out + 1] = dotted .. ' = ' .. v[1] .. ': ' .. bad
      end
      ::next_value::
    end
  end
  sl.setup({ provider = { name = 'echo' } })
  return { #leaves, out }
end

return M
