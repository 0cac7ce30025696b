---@mod sightline.ui.pane.blocks  The transcript's code blocks: jump between them, yank one.
---
--- Blocks are found with the markdown parser in what the user and the model wrote (the
--- core's Markdown spans), parsed when a key asks: nothing is kept up to date per delta.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local S = state.S

local query ---@type vim.treesitter.Query|false|nil

---@class sightline.CodeBlock
---@field start integer the opening fence's row (0-based)
---@field stop integer the block's last row: its closing fence, or the span's end
---@field first integer the first row of its code
---@field last integer the last row of its code (first - 1 when it holds none)
---@field indent integer the fence's column: as many spaces are taken off each code line
---@field lang string? the language its fence names

---The fenced code blocks of one Markdown span, in row order.
---@param buf integer
---@param span integer[] {first, end} rows (0-based, end exclusive)
---@return sightline.CodeBlock[]
local function span_blocks(buf, span)
  local lines = api.nvim_buf_get_lines(buf, span[1], span[2], false)
  local text = table.concat(lines, '\n') .. '\n'
  if not (text:find('```', 1, true) or text:find('~~~', 1, true)) then
    return {}
  end
  if query == nil then
    local ok, q = pcall(vim.treesitter.query.parse, 'markdown', '(fenced_code_block) @block')
    query = ok and q or false
  end
  local ok, parser = pcall(vim.treesitter.get_string_parser, text, 'markdown')
  if not query or not ok or not parser then
    return {}
  end
  local tree = parser:parse()[1] -- the block structure only: no injected language is needed
  local out = {}
  for _, node in query:iter_captures(tree:root(), text, 0, -1) do
    local sr, sc, er, ec = node:range()
    local block = { start = span[1] + sr, stop = span[1] + (ec == 0 and er - 1 or er), indent = sc }
    block.first, block.last = block.start + 1, block.start
    local fences = 0
    for child in node:iter_children() do
      local kind = child:type()
      if kind == 'code_fence_content' then
        local csr, _, cer, cec = child:range()
        block.first, block.last = span[1] + csr, span[1] + (cec == 0 and cer - 1 or cer)
      elseif kind == 'fenced_code_block_delimiter' then
        fences = fences + 1
        if fences == 2 then -- the closing fence: the code ends on the row above it
          block.last = math.min(block.last, span[1] + child:range() - 1)
        end
      elseif kind == 'info_string' then
        local lang = child:named_child(0)
        block.lang = lang and vim.treesitter.get_node_text(lang, text) or nil
      end
    end
    out[#out + 1] = block
  end
  return out
end

---The transcript's window, when it is the current one.
---@return integer? win
local function transcript_win()
  local win = api.nvim_get_current_win()
  if S.tbuf and api.nvim_win_get_buf(win) == S.tbuf then
    return win
  end
  require('sightline.ui.message').notify('sightline: code blocks are in the transcript', vim.log.levels.WARN)
end

---Move to the first code row of the next (`dir` 1) or previous (-1) code block, `count`
---times; the jump goes into the jumplist. Spans are parsed from the cursor on, until found.
---@param dir 1|-1
---@param count integer?
function M.jump(dir, count)
  local win = transcript_win()
  if not win then
    return
  end
  local row = api.nvim_win_get_cursor(win)[1] - 1
  local spans = S.md_spans
  local want, found = count or 1, nil
  local i, stop, step = 1, #spans, 1
  if dir < 0 then
    i, stop, step = #spans, 1, -1
  end
  for k = i, stop, step do
    local span = spans[k]
    if (dir > 0 and span[2] > row) or (dir < 0 and span[1] <= row) then
      local blocks = span_blocks(S.tbuf, span)
      local j, jstop = 1, #blocks
      if dir < 0 then
        j, jstop = #blocks, 1
      end
      for b = j, jstop, step do
        local block = blocks[b]
        -- A block is passed from its first code row: on it or above it, the next one is
        -- below; anywhere inside it, the previous one is this block's own start.
        if (dir > 0 and block.first > row) or (dir < 0 and block.first < row) then
          found, want = block, want - 1
          if want == 0 then
            break
          end
        end
      end
      if want == 0 then
        break
      end
    end
  end
  if not found then
    require('sightline.ui.message').notify(
      ('sightline: no code block %s'):format(dir > 0 and 'below' or 'above'),
      vim.log.levels.WARN
    )
    return
  end
  vim.cmd("normal! m'")
  api.nvim_win_set_cursor(win, { math.min(found.first, found.stop) + 1, 0 })
end

---Yank the code of the block under the cursor (without its fences) into the register the
---mapping was given (`"a`), linewise, as `y` does.
function M.yank()
  local win = transcript_win()
  if not win then
    return
  end
  local row = api.nvim_win_get_cursor(win)[1] - 1
  for _, span in ipairs(S.md_spans) do
    if span[1] <= row and row < span[2] then
      for _, block in ipairs(span_blocks(S.tbuf, span)) do
        if block.start <= row and row <= block.stop then
          local lines = api.nvim_buf_get_lines(S.tbuf, block.first, block.last + 1, false)
          for n, line in ipairs(lines) do
            -- CommonMark: up to the fence's indentation is taken off each code line.
            local lead = #line:match('^ *')
            lines[n] = line:sub(math.min(lead, block.indent) + 1)
          end
          local reg = vim.v.register
          vim.fn.setreg(reg, lines, 'l')
          if reg == '"' then
            vim.fn.setreg('0', lines, 'l') -- as a yank does
          end
          local what = block.lang and (block.lang .. ' block') or 'code block'
          api.nvim_echo(
            { { ('sightline: yanked the %s (%d %s)'):format(what, #lines, #lines == 1 and 'line' or 'lines') } },
            false,
            {}
          )
          return
        end
      end
      break
    end
  end
  require('sightline.ui.message').notify('sightline: no code block under the cursor', vim.log.levels.WARN)
end

return M
