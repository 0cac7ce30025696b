-- Language servers for the resolve tests: one in-process, one a process (tests/fake_lsp.py),
-- and a core stub that fails a reveal that would call the core.
-- Called in a child Neovim as lua_helper(nv, 'lsp.<function>', ...) (tests/lua_helper.py).
local M = {}

-- No Lua the core calls may call the core: a core request during a reveal fails the test.
function M.stub_host()
  package.loaded['sightline.host'] = {
    request = function(method)
      error('a reveal called the core: ' .. tostring(method))
    end,
  }
end

-- An in-process language server (vim.lsp.start accepts a function as cmd) whose symbols
-- disagree with tree-sitter on purpose: the answer shows which source won.
function M.fake_in_process(buf, symbols)
  local function server(dispatchers)
    local closing = false
    return {
      request = function(method, _, callback)
        vim.schedule(function()
          if method == 'initialize' then
            callback(nil, { capabilities = { documentSymbolProvider = true } })
          elseif method == 'textDocument/documentSymbol' then
            callback(nil, symbols)
          else
            callback(nil, vim.NIL)
          end
        end)
        return true, 1
      end,
      notify = function(method)
        if method == 'exit' then
          dispatchers.on_exit(0, 15)
        end
        return true
      end,
      is_closing = function()
        return closing
      end,
      terminate = function()
        closing = true
      end,
    }
  end
  vim.lsp.start({ name = 'fake', cmd = server, root_dir = vim.fn.getcwd() }, { bufnr = buf })
  return vim.wait(2000, function()
    return #vim.lsp.get_clients({ bufnr = buf, method = 'textDocument/documentSymbol' }) > 0
  end)
end

-- A real language server process (tests/fake_lsp.py over stdio) that answers documentSymbol
-- only after `delay` seconds, as a cold server does right after attaching.
function M.slow(buf, python, script, symbols_file, delay)
  vim.lsp.start(
    { name = 'slow', cmd = { python, script, symbols_file, delay }, root_dir = vim.fn.getcwd() },
    { bufnr = buf }
  )
  return vim.wait(5000, function()
    return #vim.lsp.get_clients({ bufnr = buf, method = 'textDocument/documentSymbol' }) > 0
  end)
end

return M
