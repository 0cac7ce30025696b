-- What the benchmarks (tests/bench*.py) time inside the child: each function one measurement.
-- Called in a child Neovim as lua_helper(nv, 'bench.<function>', ...) (tests/lua_helper.py).
local M = {}

function M.stop()
  local t = vim.uv.hrtime()
  vim.cmd('Sightline stop')
  vim.wait(5000, function()
    return require('sightline').status().state == 'idle'
  end, 1)
  return (vim.uv.hrtime() - t) / 1e6
end

function M.status()
  local t = vim.uv.hrtime()
  require('sightline.host').request('agent.status')
  return (vim.uv.hrtime() - t) / 1e6
end

function M.change_setup()
  local lines = {}
  for i = 1, 200000 do
    lines[i] = ('line %06d: some text to make the buffer about ten megabytes'):format(i)
  end
  vim.api.nvim_buf_set_lines(0, 0, -1, false, lines)
  _G.bench = {}
  vim.api.nvim_buf_attach(0, false, {
    on_lines = function()
      if _G.bench.t0 and not _G.bench.t1 then
        _G.bench.t1 = vim.uv.hrtime()
      end
    end,
  })
  return vim.api.nvim_buf_get_offset(0, vim.api.nvim_buf_line_count(0))
end

function M.change_accept()
  _G.bench = { t0 = vim.uv.hrtime() }
  assert(require('sightline').decide('accept'))
end

-- Installed in the child: when each key was typed (before Neovim handles it).
function M.completion_on_key()
  _G.bench_key_at = 0
  vim.on_key(function()
    _G.bench_key_at = vim.uv.hrtime()
  end)
end

-- A long token comes back as its length and end: copying 50 kB on every poll would steal
-- the time being measured from Neovim's loop.
function M.completion_last()
  local l = require('sightline.complete').last_list or { at = 0, token = false }
  local token = l.token and #l.token > 200 and (#l.token .. ':' .. l.token:sub(-20)) or l.token
  return { _G.bench_key_at, l.at, token, l.cpu_ms or 0 }
end

function M.inline_timed(spec)
  local t0 = vim.uv.hrtime()
  assert(require('sightline.port').show_hunks(spec))
  vim.cmd('redraw')
  local ms = (vim.uv.hrtime() - t0) / 1e6
  require('sightline.port').clear_hunks(spec.id)
  vim.cmd('redraw')
  return ms
end

function M.pane_apply(deltas)
  local pane = require('sightline.ui.pane')
  local out = {}
  for i, d in ipairs(deltas) do
    local t = os.clock() -- Neovim's CPU time: waiting for a core of a loaded machine is left out
    pane.apply(d)
    out[i] = (os.clock() - t) * 1000
  end
  return out
end

---Stream `deltas` as the core's pushes are applied (one every 2 ms), into pane `id` when
---given (bench_chats: one of several open), else into the pane of the current tab.
function M.pane_stream(deltas, id)
  local state = require('sightline.ui.pane.state')
  local pane = require('sightline.ui.pane')
  local i, timer = 0, vim.uv.new_timer()
  _G.bench_stream_done = false
  timer:start(
    0,
    2,
    vim.schedule_wrap(function()
      i = i + 1
      if i > #deltas then
        if not timer:is_closing() then
          timer:stop()
          timer:close()
        end
        _G.bench_stream_done = true
        return
      end
      if id then
        state.with(id, pane.apply, deltas[i])
      else
        pane.apply(deltas[i])
      end
    end)
  )
end

function M.provider_watch()
  _G.bench = {}
  local buf = require('sightline.ui.pane').buffers().transcript
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function()
      if _G.bench.armed and not _G.bench.t then
        for _, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
          if l:find('BENCHTEXT', 1, true) then
            _G.bench.t = vim.uv.hrtime() / 1e9
            break
          end
        end
      end
    end,
  })
end

---Time `:Sightline chats` picking pane `id`: from the command line's <CR> to Insert mode in
---that pane's composer (ms, in _G.bench_switch).
function M.arm_switch(id)
  _G.bench_switch = nil
  vim.ui.select = function(items, _, cb)
    for _, c in ipairs(items) do
      if c.pane == id then
        return cb(c)
      end
    end
  end
  local t0
  vim.api.nvim_create_autocmd('CmdlineLeave', {
    once = true,
    callback = function()
      t0 = vim.uv.hrtime()
    end,
  })
  vim.api.nvim_create_autocmd('InsertEnter', {
    once = true,
    callback = function()
      local cbuf = require('sightline.ui.pane.state').get(id).cbuf
      if t0 and vim.api.nvim_get_current_buf() == cbuf then
        _G.bench_switch = (vim.uv.hrtime() - t0) / 1e6
      else
        _G.bench_switch = -1
      end
    end,
  })
end

return M
