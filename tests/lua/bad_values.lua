-- Bad Lua values, built inside the child (functions, cyclic tables and vim.NIL cannot cross
-- msgpack), and the check that a message shown for one leaks nothing.
-- Called in a child Neovim as lua_helper(nv, 'bad_values.<function>', ...) (tests/lua_helper.py).
local M = {}

-- A list of {label, value} pairs (index 2 may be nil, so read it with v[2]).
function M.values()
  local cyclic = {}
  cyclic.self = cyclic
  local deep = {}
  local d = deep
  for _ = 1, 500 do
    d.x = {}
    d = d.x
  end
  local cyclic_list = { 1, 2 }
  cyclic_list[3] = cyclic_list
  return {
    { 'nil', nil },
    { 'vim.NIL', vim.NIL },
    { 'true', true },
    { 'false', false },
    { '0', 0 },
    { '-1', -1 },
    { '1.5', 1.5 },
    { 'NaN', 0 / 0 },
    { 'inf', math.huge },
    { '-inf', -math.huge },
    { '2^53', 2 ^ 53 },
    { '1e300', 1e300 },
    { 'function', function() end },
    { 'coroutine', coroutine.create(function() end) },
    { 'userdata', io.stdout },
    { 'empty string', '' },
    { 'blank string', '   ' },
    { 'word', 'oops' },
    { 'huge string', ('x'):rep(200000) },
    { 'NUL string', 'a\0b' },
    { 'newline string', 'a\nb' },
    { 'empty table', {} },
    { 'list', { 1, 2, 3 } },
    { 'nested', { a = { b = { c = { d = 'e' } } } } },
    { 'deep', deep },
    { 'cyclic', cyclic },
    { 'cyclic list', cyclic_list },
    { 'wrong-typed fields', { buffer = 'x', start_row = {}, file_path = 5, path = true } },
    { 'NIL fields', { buffer = vim.NIL, start_row = vim.NIL } },
    { 'float range', { buffer = 0, start_row = 0.5, start_col = 0, end_row = 0, end_col = 1 } },
    { 'huge range', { buffer = 1e300, start_row = 0, start_col = 0, end_row = 0, end_col = 1 } },
    { 'negative buffer', { buffer = -5, start_row = 0, start_col = 0, end_row = 0, end_col = 0 } },
    { 'non-string key', { [true] = 1, [2.5] = 'x' } },
  }
end

-- Why a message shown to the user is wrong (a traceback, internals, too long), or nil.
function M.leak(msg)
  if type(msg) ~= 'string' then
    return 'not a string: ' .. type(msg)
  end
  for _, pat in ipairs({
    '%.lua:%d+:',
    'stack traceback',
    'Traceback %(most recent',
    'internal error',
    'attempt to ',
    'E5108',
  }) do
    if msg:find(pat) then
      return 'leaks ' .. pat
    end
  end
  if #msg > 400 then
    return 'too long (' .. #msg .. ' bytes)'
  end
end

return M
