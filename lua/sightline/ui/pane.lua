---@mod sightline.ui.pane  The agent pane: a transcript above a composer. It applies what the core computed.
local M = {}
local api = vim.api

local ns = api.nvim_create_namespace('sightline.transcript')
local md_ns = api.nvim_create_namespace('sightline.markdown')
local md_view_ns = api.nvim_create_namespace('sightline.markdown.view') -- its provider's
local notice_ns = api.nvim_create_namespace('sightline.notice')
local hint_ns = api.nvim_create_namespace('sightline.hint')
local SPINNER = { '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏' }

local S = {
  tbuf = nil, ---@type integer?
  cbuf = nil, ---@type integer?
  twin = nil, ---@type integer?
  cwin = nil, ---@type integer?
  timer = nil, ---@type uv.uv_timer_t?
  since = nil, ---@type integer?
  frame = 1,
  prompts = {}, ---@type string[] prompts sent from the composer, oldest first
  prompt_index = nil, ---@type integer?
  draft = nil, ---@type string[]? the unsent text <Up> stepped away from, restored on <Down>
  notice = nil, ---@type {text: string, level: integer}? the last refusal or failure shown
  folds = {}, ---@type integer[][] fold spans [first, end) as the core sent them, sorted
  md_resume = nil, ---@type {first: integer, row: integer}? where the last Markdown span re-parses
  -- Markdown spans no window has shown yet, sorted, as {from, end, first}: rendered when a
  -- window first draws them (a reopened long conversation renders only what is in view).
  md_pending = {}, ---@type integer[][]
  md_last = nil, ---@type integer? the first row of the transcript's last Markdown span
}

-- The editor keeps at least this many columns beside the pane; the pane at least PANE_MIN.
M.MIN_EDITOR_WIDTH = 40
M.PANE_MIN_WIDTH = 20
local NOTICE_MS = 20000

-- Folds and the current reply's Markdown are updated from the delta's first row on, never
-- over the whole transcript: a streamed delta costs the same at 100 rows and at 100 000.

---@return boolean changed whether a span was dropped or added
local function apply_folds(start, folds)
  -- Spans come sorted and disjoint: those ending at or before `start` stay, the rest the
  -- delta sends again.
  local keep, changed = S.folds, false
  while #keep > 0 and keep[#keep][2] > start do
    keep[#keep], changed = nil, true
  end
  for _, span in ipairs(folds or {}) do
    keep[#keep + 1], changed = span, true
  end
  return changed
end

---Whether a 0-based row lies in a fold span (bisection over the sorted spans).
local function folded(row)
  local spans = S.folds
  local lo, hi = 1, #spans
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local span = spans[mid]
    if row < span[1] then
      hi = mid - 1
    elseif row >= span[2] then
      lo = mid + 1
    else
      return true
    end
  end
  return false
end

---The first row of the last block-level node of a rendered span: the rows above it are
---complete blocks that what streams in later cannot change, so the next delta into the same
---span re-parses from here only.
local function last_block_row(tree, first)
  local node = tree:root()
  while node do
    local n = node:named_child_count()
    local last = n > 0 and node:named_child(n - 1) or nil
    if not last then
      break
    end
    -- Sections and lists hold blocks of their own: a new item re-parses from its own start.
    if last:type() ~= 'section' and last:type() ~= 'list' then
      local row = last:range()
      return first + row
    end
    node = last
  end
  return first
end

local function valid_buf(b)
  return b and api.nvim_buf_is_valid(b)
end

local function valid_win(w)
  return w and api.nvim_win_is_valid(w)
end

local function scratch(name, role)
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  pcall(api.nvim_buf_set_name, buf, name)
  vim.b[buf].sightline_role = role
  return buf
end

local function map(buf, modes, lhs, rhs, desc)
  if lhs and lhs ~= false and lhs ~= '' then
    vim.keymap.set(modes, lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = desc })
  end
end

local render_bar, render_notice -- defined below
local register_markdown -- defined with the composer's hint

---Show a refusal or failure where the user looks: the pane's bar and a note at the end of
---the transcript (virtual lines: the core's rows stay as they are), besides vim.notify.
---`opts.show` brings the pane into view first (a refused agent action); otherwise the note
---waits in the pane for when it is opened.
---@param msg string
---@param level integer? vim.log.levels (WARN by default)
---@param opts {show: boolean?, notify: boolean?}?
function M.notice(msg, level, opts)
  opts = opts or {}
  level = level or vim.log.levels.WARN
  if opts.notify ~= false then
    vim.notify(msg, level)
  end
  local text = tostring(msg):gsub('^sightline: ', '')
  local notice = { text = text, level = level }
  S.notice = notice
  if opts.show then
    M.show()
  end
  render_notice()
  render_bar()
  vim.defer_fn(function()
    if S.notice == notice then
      M.clear_notice()
    end
  end, NOTICE_MS)
end

---Forget the bar's refusal note.
function M.clear_notice()
  S.notice = nil
  render_notice()
  render_bar()
end

---Report `err` through M.notice when an action was refused; returns ok.
---@param ok any
---@param err string?
---@param opts table? passed to M.notice
---@return any ok
function M.refused(ok, err, opts)
  if not ok and err then
    M.notice(err, vim.log.levels.WARN, opts)
  end
  return ok
end

---Send the composer's text (refused, with a note, when it is empty).
function M.submit()
  if not valid_buf(S.cbuf) then
    return
  end
  local text = table.concat(api.nvim_buf_get_lines(S.cbuf, 0, -1, false), '\n')
  if vim.trim(text) == '' then
    M.notice('sightline: nothing to send: type a message first')
    return
  end
  if M.refused(require('sightline').send(text)) then
    M.clear_notice()
    table.insert(S.prompts, text)
    S.prompt_index, S.draft = nil, nil
    api.nvim_buf_set_lines(S.cbuf, 0, -1, false, {})
  end
end

---Step through sent prompts in the composer (delta -1 older, +1 newer). The unsent draft is
---kept when stepping away and comes back past the newest prompt.
---@param delta integer -1 or +1
function M.recall(delta)
  if #S.prompts == 0 or not valid_buf(S.cbuf) then
    return
  end
  local i = (S.prompt_index or (#S.prompts + 1)) + delta
  i = math.max(1, math.min(#S.prompts + 1, i))
  if i == (S.prompt_index or (#S.prompts + 1)) then
    return
  end
  if S.prompt_index == nil then
    S.draft = api.nvim_buf_get_lines(S.cbuf, 0, -1, false)
  end
  local lines
  if i > #S.prompts then
    S.prompt_index, lines, S.draft = nil, S.draft or { '' }, nil
  else
    S.prompt_index, lines = i, vim.split(S.prompts[i], '\n', { plain = true })
  end
  api.nvim_buf_set_lines(S.cbuf, 0, -1, false, lines)
end

---<Up>/<Down> in the composer: recall at its first/last line, move the cursor elsewhere.
local function recall_key(delta)
  return function()
    local row = api.nvim_win_get_cursor(0)[1]
    local edge = delta < 0 and 1 or api.nvim_buf_line_count(0)
    if row == edge then
      M.recall(delta)
    else
      vim.cmd('normal! ' .. (delta < 0 and 'k' or 'j'))
    end
  end
end

local function set_keys(buf)
  local keys = require('sightline.config').get().pane.keys
  local sl = function(fn, ...)
    local args = { ... }
    return function()
      M.refused(require('sightline')[fn](unpack(args)))
    end
  end
  map(buf, 'n', keys.close, M.close, 'sightline: close the pane')
  map(buf, { 'n', 'i' }, keys.stop, sl('stop'), 'sightline: stop the turn')
  map(buf, 'n', keys.accept, sl('decide', 'accept'), 'sightline: accept the proposal')
  map(buf, 'n', keys.reject, sl('decide', 'reject'), 'sightline: reject the proposal')
  map(buf, 'n', keys.compare, sl('compare'), 'sightline: compare the proposal side by side')
  if buf == S.tbuf then
    local chips = function(how)
      return function()
        if not require('sightline.ui.chips').navigate(how) and how == nil then
          vim.cmd('normal! j') -- <CR> off a chip keeps its usual meaning
        end
      end
    end
    map(buf, 'n', '<CR>', chips(nil), 'sightline: open the code reference')
    map(buf, 'n', '<S-CR>', chips('select'), 'sightline: select the code reference')
    map(buf, 'n', 'gs', chips('select'), 'sightline: select the code reference')
  end
  if buf == S.cbuf then
    map(buf, 'n', keys.send, M.submit, 'sightline: send')
    map(buf, { 'n', 'i' }, keys.submit, M.submit, 'sightline: send')
    map(buf, 'n', '<Up>', recall_key(-1), 'sightline: previous prompt')
    map(buf, 'n', '<Down>', recall_key(1), 'sightline: next prompt')
  end
end

-- The composer's hint: virtual text while it is empty (never buffer text), drawn by a
-- decoration provider so that nothing runs on a keystroke but the redraw itself.
local function hint_text()
  local keys = require('sightline.config').get().pane.keys
  local parts = { 'Ask the agent' }
  if keys.submit then
    table.insert(parts, keys.submit .. ' sends')
  end
  if keys.send then
    table.insert(parts, keys.send .. ' in Normal mode too')
  end
  table.insert(parts, '@ mentions a file')
  return table.concat(parts, ' · ')
end

local hint_registered = false
local function register_hint()
  if hint_registered then
    return
  end
  hint_registered = true
  api.nvim_set_decoration_provider(hint_ns, {
    on_win = function(_, _, buf)
      return buf == S.cbuf and api.nvim_buf_line_count(buf) == 1
    end,
    on_line = function(_, _, buf, row)
      if row == 0 and api.nvim_buf_get_lines(buf, 0, 1, false)[1] == '' then
        api.nvim_buf_set_extmark(buf, hint_ns, 0, 0, {
          virt_text = { { hint_text(), 'SightlineHint' } },
          virt_text_pos = 'overlay',
          hl_mode = 'combine',
          ephemeral = true,
        })
      end
    end,
  })
end

local render_pending -- defined with the Markdown below

local markdown_registered = false
---Spans scrolled into view are rendered as the window is drawn: the provider's on_win runs
---before the window's lines are, and extmarks set there are used in that same redraw.
register_markdown = function()
  if markdown_registered then
    return
  end
  markdown_registered = true
  api.nvim_set_decoration_provider(md_view_ns, {
    on_win = function(_, win, buf, toprow)
      if buf == S.tbuf and #S.md_pending > 0 then
        pcall(render_pending, buf, win, toprow)
      end
      return false
    end,
  })
end

local function ensure_buffers()
  if not valid_buf(S.tbuf) then
    S.tbuf = scratch('sightline://transcript', 'transcript')
    vim.bo[S.tbuf].undolevels = -1
    -- Its own filetype: the transcript is rendered here (only what was written as Markdown
    -- is read as Markdown), so Markdown plugins must not re-render notes and diffs.
    vim.bo[S.tbuf].filetype = 'sightline'
    vim.bo[S.tbuf].modifiable = false
    S.folds, S.md_resume, S.md_pending, S.md_last = {}, nil, {}, nil
    set_keys(S.tbuf)
    register_markdown()
  end
  if not valid_buf(S.cbuf) then
    S.cbuf = scratch('sightline://composer', 'composer')
    vim.bo[S.cbuf].filetype = 'markdown'
    set_keys(S.cbuf)
    pcall(function()
      require('sightline.complete').attach(S.cbuf)
    end)
    register_hint()
  end
end

---The transcript's fold expression: rows the core marked (long command output, thinking).
function M.foldexpr()
  return folded(vim.v.lnum - 1) and '1' or '0'
end

---'foldtext' of the transcript: a fold's header and how many lines it hides.
---@return string
function M.foldtext()
  local n = vim.v.foldend - vim.v.foldstart + 1
  local first = vim.fn.getline(vim.v.foldstart)
  if vim.startswith(first, '∴') then -- the model's thinking, folded from its header on
    return ('%s  ▸ %d %s (zo shows them)'):format(first, n - 1, n - 1 == 1 and 'line' or 'lines')
  end
  return ('  ▸ %d more %s of output (zo shows them)'):format(n, n == 1 and 'line' or 'lines')
end

local function style(win, role, buf)
  vim.w[win].sightline_role = role
  -- Local to the pane's buffer in that window (`:setlocal`): a window split off the pane
  -- and given another buffer gets the user's options, not the pane's folds and bars.
  local wo = vim.wo[win][0]
  wo.number, wo.relativenumber, wo.signcolumn = false, false, 'no'
  wo.wrap, wo.linebreak, wo.foldenable = true, true, false
  wo.winfixwidth = true
  -- The pane's windows show the pane's buffers and nothing else: `:e file` there fails
  -- instead of putting a file where the composer's keys would type into it.
  wo.winfixbuf = true
  if buf == S.tbuf then
    wo.conceallevel, wo.concealcursor = 2, 'nc'
    -- A wrapped row hangs under the text of its line: after a diff line's +/-/space column
    -- and the code's indentation, a list item's bullet (the list pattern's width).
    wo.breakindent, wo.breakindentopt = true, 'list:-1'
    vim.bo[buf].formatlistpat = '^[-+ ]'
    wo.foldenable, wo.foldmethod, wo.foldlevel = true, 'expr', 0
    wo.foldexpr = "v:lua.require'sightline.ui.pane'.foldexpr()"
    wo.foldtext = "v:lua.require'sightline.ui.pane'.foldtext()"
    wo.fillchars = 'fold: ,eob: '
  end
end

---A pane window: valid and still showing its buffer. A window the user turned to another
---buffer (with 'winfixbuf' off) is theirs now and never reused or closed as the pane's.
local function ours(win, buf)
  if not valid_win(win) then
    return false
  end
  if api.nvim_win_get_buf(win) ~= buf then
    vim.w[win].sightline_role = nil
    return false
  end
  return true
end

---@return boolean
function M.is_open()
  return ours(S.twin, S.tbuf) and ours(S.cwin, S.cbuf)
end

---The pane's width for the current terminal: the configured width, clamped so the editor
---keeps M.MIN_EDITOR_WIDTH columns (on a very narrow terminal the two share it).
function M.width()
  local cfg = require('sightline.config').get().pane
  local cols = vim.o.columns
  local want = cfg.width < 1 and math.floor(cols * cfg.width) or math.floor(cfg.width)
  local max = cols - M.MIN_EDITOR_WIDTH - 1 -- one column for the separator
  local min = math.min(M.PANE_MIN_WIDTH, math.floor(cols / 2))
  return math.max(min, math.min(want, max))
end

local function composer_height()
  return math.max(2, math.min(6, math.floor(vim.o.lines / 5)))
end

---Fit the open pane to the terminal (called on VimResized).
function M.resize()
  if M.is_open() then
    pcall(api.nvim_win_set_width, S.twin, M.width())
    pcall(api.nvim_win_set_height, S.cwin, composer_height())
    render_notice()
    render_bar()
  end
end

local resize_group = api.nvim_create_augroup('sightline.pane', { clear = true })
api.nvim_create_autocmd('VimResized', {
  group = resize_group,
  callback = function()
    M.resize()
  end,
  desc = 'sightline: fit the pane to the terminal',
})

api.nvim_create_autocmd('ModeChanged', {
  group = resize_group,
  callback = function()
    if S.folds_stale and not api.nvim_get_mode().mode:match('^[iR]') then
      M.refresh_folds()
    end
  end,
  desc = 'sightline: the transcript folds a delta brought in Insert mode',
})

api.nvim_create_autocmd('WinScrolled', {
  group = resize_group,
  callback = function()
    if S.tbuf and #S.md_pending > 0 then
      M.prefetch()
    end
  end,
  desc = 'sightline: render the Markdown around the transcript view ahead',
})

local function open_windows()
  M.close()
  local cfg = require('sightline.config').get().pane
  S.twin = api.nvim_open_win(S.tbuf, false, { split = cfg.side, win = -1, width = M.width() })
  S.cwin = api.nvim_open_win(S.cbuf, false, { split = 'below', win = S.twin, height = composer_height() })
  style(S.twin, 'pane', S.tbuf)
  style(S.cwin, 'pane', S.cbuf)
  vim.wo[S.cwin][0].winfixheight = true
  M.on_state(require('sightline.host').status())
  local last = api.nvim_buf_line_count(S.tbuf)
  api.nvim_win_set_cursor(S.twin, { last, 0 })
  render_notice()
end

---Bring the pane into view without taking the focus (the current window and mode stay).
function M.show()
  ensure_buffers()
  if not M.is_open() then
    open_windows()
  end
end

---Open the pane (or focus it) with the composer ready for typing.
function M.open()
  ensure_buffers()
  if not M.is_open() then
    open_windows()
  end
  api.nvim_set_current_win(S.cwin)
  vim.cmd.startinsert({ bang = true })
end

---Hide the pane; the transcript stays and shows again on reopen.
function M.close()
  for _, pair in ipairs({ { S.cwin, S.cbuf }, { S.twin, S.tbuf } }) do
    if ours(pair[1], pair[2]) and #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, pair[1], true)
    end
  end
  S.twin, S.cwin = nil, nil
end

---Open the pane, or close it when it is open.
function M.toggle()
  if M.is_open() then
    M.close()
  else
    M.open()
  end
end

---The transcript buffer (created if needed), for tests and integrations.
function M.buffers()
  ensure_buffers()
  return { transcript = S.tbuf, composer = S.cbuf }
end

-- Markdown ------------------------------------------------------------------------------

---Paint one span of Markdown rows with the tree-sitter parsers Neovim ships: the
---highlights queries of markdown, markdown_inline and of every injected language that has a
---parser; `conceal` hides markers in the transcript window (conceallevel 2).
local function render_markdown(buf, first, last)
  local lines = api.nvim_buf_get_lines(buf, first, last, false)
  -- A closing fence is only one when a newline ends it.
  local text = table.concat(lines, '\n') .. '\n'
  if not text:find('[%*_`#~%[%]>|<&\\]') then
    -- Plain prose: nothing to render, and every blank line is a block boundary.
    for i = #lines, 1, -1 do
      if lines[i] == '' then
        return first + i - 1
      end
    end
    return first
  end
  local ok, parser = pcall(vim.treesitter.get_string_parser, text, 'markdown')
  if not ok or not parser then
    return first
  end
  local pok, trees = pcall(parser.parse, parser, true)
  if not pok or not trees or not trees[1] then
    return first
  end
  local resume = last_block_row(trees[1], first)
  parser:for_each_tree(function(tree, ltree)
    local lang = ltree:lang()
    -- An injected language paints over its host (the lua in a fence over the fence's own
    -- group): trees come in no fixed order, so depth decides, not the order of painting.
    local depth, up = 0, ltree:parent()
    while up do
      depth, up = depth + 1, up:parent()
    end
    local qok, query = pcall(vim.treesitter.query.get, lang, 'highlights')
    if not qok or not query then
      return
    end
    for id, node, metadata in query:iter_captures(tree:root(), text, 0, -1) do
      local name = query.captures[id]
      if name ~= 'spell' and name ~= 'nospell' and name:sub(1, 1) ~= '_' then
        local sr, sc, er, ec = node:range()
        local md = metadata[id] or {}
        local opts = {
          end_row = first + er,
          end_col = ec,
          hl_group = '@' .. name .. '.' .. lang,
          -- A query's own priority replaces the default (markdown sets 90 on code blocks so
          -- that what is inside them wins); injected trees sit above their host.
          priority = (tonumber(metadata.priority or md.priority) or 100) + 10 * depth,
          strict = false,
        }
        local conceal = metadata.conceal or md.conceal
        if conceal then
          opts.conceal = conceal
        end
        if metadata.conceal_lines ~= nil or md.conceal_lines ~= nil then
          opts.conceal_lines = ''
        end
        pcall(api.nvim_buf_set_extmark, buf, md_ns, first + sr, sc, opts)
      end
    end
  end)
  return resume
end

-- Transcript ----------------------------------------------------------------------------

-- Neovim does not update 'foldexpr' folds while Insert mode is on (the composer's usual
-- state while a reply streams), so a fold a delta brings in Insert mode (thinking, command
-- output) is computed when Insert mode ends: see the ModeChanged autocommand. Replacing the
-- rows through `:normal` instead froze a Neovim without a UI.
local function set_rows(buf, start, lines, folds)
  if folds and api.nvim_get_mode().mode:match('^[iR]') then
    S.folds_stale = true -- recomputed when Insert mode ends: O(lines), ~3 ms per 1 000
  end
  api.nvim_buf_set_lines(buf, start, -1, false, lines)
end

---Compute the transcript's folds again in every window showing it (after Insert mode):
---setting 'foldmethod' recomputes them, keeps the state of folds the user opened or
---closed, and closes new ones as 'foldlevel' says.
function M.refresh_folds()
  S.folds_stale = false
  if not valid_buf(S.tbuf) then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(S.tbuf)) do
    vim.wo[win][0].foldmethod = 'expr'
  end
end

---The row after the last one a window whose first row is `top` can show: one screen row
---per line at least, a fold span counted as one row even when open (more is only rendered
---early, never missed).
local function view_end(win, top)
  local count = api.nvim_buf_line_count(api.nvim_win_get_buf(win))
  local height = api.nvim_win_get_height(win)
  -- The first fold span ending after `top` (bisection), then the spans in order.
  local spans = S.folds
  local lo, hi = 1, #spans + 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if spans[mid][2] <= top then
      lo = mid + 1
    else
      hi = mid
    end
  end
  local row, rows, i = top, 0, lo
  while rows < height and row < count do
    local span = spans[i]
    if span and row >= span[1] then
      row, i = span[2], i + 1
    else
      row = row + 1
    end
    rows = rows + 1
  end
  return row
end

local function render_span(buf, p)
  local ok, row = pcall(render_markdown, buf, p[1], p[2]) -- a nicety; the text is there
  if p[3] == S.md_last then
    S.md_resume = { first = p[3], row = ok and row or p[1] }
  end
end

---Render the pending Markdown spans that rows [top, view_end) of `win` reach; with `limit`,
---at most that many, and rows `margin` view heights around the view count as in it.
local function render_near(buf, win, top, margin, limit)
  local pending = S.md_pending
  if #pending == 0 then
    return 0
  end
  local bottom = view_end(win, top)
  local reach = (bottom - top) * (margin or 0)
  top, bottom = top - reach, bottom + reach
  local kept, done = {}, 0
  for _, p in ipairs(pending) do
    if p[2] > top and p[1] < bottom and (not limit or done < limit) then
      render_span(buf, p)
      done = done + 1
    else
      kept[#kept + 1] = p
    end
  end
  S.md_pending = kept
  return done
end

render_pending = function(buf, win, top)
  render_near(buf, win, top)
end

-- Spans a few screens around the view are rendered ahead, one per turn of the event loop,
-- so that scrolling finds them ready and a key typed meanwhile waits for one span at most.
local PREFETCH_SCREENS = 2
local prefetching = false
local function prefetch()
  prefetching = false
  local buf = S.tbuf
  if not valid_buf(buf) or #S.md_pending == 0 then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if render_near(buf, win, vim.fn.line('w0', win) - 1, PREFETCH_SCREENS, 1) > 0 then
      prefetching = true
      vim.schedule(prefetch)
      return
    end
  end
end

local function schedule_prefetch()
  if not prefetching and #S.md_pending > 0 then
    prefetching = true
    vim.schedule(prefetch)
  end
end

---Render ahead the Markdown around the transcript's view (on WinScrolled).
function M.prefetch()
  schedule_prefetch()
end

---Apply a delta computed by the core: replace rows from `start`, repaint their highlights.
---@param delta table {start, lines, highlights, folds, …} rows from `start` (0-based)
function M.apply(delta)
  ensure_buffers()
  local buf = S.tbuf
  local count = api.nvim_buf_line_count(buf)
  if delta.start > count then
    -- A delta was lost (core restarted mid-update): ask for the whole transcript.
    local res = require('sightline.host').request('transcript.full')
    if not res then
      return
    end
    delta = res.transcript
  end
  local follow = valid_win(S.twin) and api.nvim_win_get_cursor(S.twin)[1] >= count
  local folds_changed = apply_folds(delta.start, delta.folds)
  vim.bo[buf].modifiable = true
  local lines = delta.lines
  if delta.start == 0 and #lines == 0 then
    lines = { '' }
  end
  set_rows(buf, delta.start, lines, folds_changed)
  vim.bo[buf].modifiable = false
  api.nvim_buf_clear_namespace(buf, ns, delta.start, -1)
  for _, h in ipairs(delta.hls or {}) do
    local row, col, end_col, group = h[1], h[2], h[3], h[4]
    if end_col < 0 then
      api.nvim_buf_set_extmark(buf, ns, row, 0, { line_hl_group = group })
    else
      api.nvim_buf_set_extmark(buf, ns, row, col, { end_col = end_col, hl_group = group })
    end
  end
  -- A span reaching into the new rows is rendered with its context: whole, or from the
  -- start of its last block when the previous delta rendered the same span (a streamed
  -- reply grows at its end; the blocks above it are final and keep their marks).
  local spans, resume = delta.md or {}, S.md_resume
  local froms = {}
  local from = delta.start
  for i, span in ipairs(spans) do
    froms[i] = span[1]
    if resume and resume.first == span[1] and resume.row >= span[1] and resume.row <= delta.start then
      froms[i] = resume.row
    end
    from = math.min(from, froms[i])
  end
  api.nvim_buf_clear_namespace(buf, md_ns, from, -1)
  S.md_resume = nil
  -- Spans are rendered when a window shows them: now for those in view, the others as they
  -- scroll into view (register_markdown). The delta sends again every span it reaches.
  local pending = S.md_pending
  while #pending > 0 and pending[#pending][2] > delta.start do
    pending[#pending] = nil
  end
  for i, span in ipairs(spans) do
    pending[#pending + 1] = { froms[i], span[2], span[1] }
  end
  if #spans > 0 then
    S.md_last = spans[#spans][1]
  end
  require('sightline.ui.chips').apply(buf, delta.start, delta.chips)
  render_notice()
  if follow then
    local last = api.nvim_buf_line_count(buf)
    api.nvim_win_set_cursor(S.twin, { last, 0 })
    if delta.start == 0 then
      -- A whole transcript (opened, reopened after a restart) fills the window from the
      -- end: the view of the longer text it replaced would hide its top behind blank rows.
      local top = math.max(1, last - api.nvim_win_get_height(S.twin) + 1)
      api.nvim_win_call(S.twin, function()
        vim.fn.winrestview({ topline = top })
      end)
    end
  end
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    render_pending(buf, win, vim.fn.line('w0', win) - 1)
  end
  schedule_prefetch()
end

---Wrap `text` to `width` display cells (virtual lines do not wrap by themselves).
local function wrap(text, width)
  local out = {}
  for _, para in ipairs(vim.split(text, '\n', { plain = true })) do
    local line = ''
    for word in para:gmatch('%S+') do
      if line ~= '' and vim.fn.strdisplaywidth(line .. ' ' .. word) > width then
        table.insert(out, line)
        line = '  ' .. word
      else
        line = line == '' and word or (line .. ' ' .. word)
      end
    end
    table.insert(out, line)
  end
  return out
end

render_notice = function()
  if not valid_buf(S.tbuf) then
    return
  end
  api.nvim_buf_clear_namespace(S.tbuf, notice_ns, 0, -1)
  local n = S.notice
  if not n then
    return
  end
  local group = n.level >= vim.log.levels.ERROR and 'SightlineError' or 'SightlineWarning'
  local width = valid_win(S.twin) and api.nvim_win_get_width(S.twin) - 1 or 40
  local virt = { { { '', group } } }
  for _, line in ipairs(wrap('✗ ' .. n.text, math.max(10, width))) do
    table.insert(virt, { { line, group } })
  end
  local last = api.nvim_buf_line_count(S.tbuf) - 1
  api.nvim_buf_set_extmark(S.tbuf, notice_ns, last, 0, { virt_lines = virt })
end

-- The bar --------------------------------------------------------------------------------

local function esc(text)
  return (tostring(text):gsub('%%', '%%%%'))
end

---Shorten `text` to `width` display cells with an ellipsis.
local function fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  local chars = vim.fn.strchars(text)
  while chars > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, chars)) > width - 1 do
    chars = chars - 1
  end
  return vim.fn.strcharpart(text, 0, chars) .. '…'
end

local function count(n)
  n = tonumber(n) or 0
  if n >= 10000 then
    return ('%dk'):format(math.floor(n / 1000 + 0.5))
  elseif n >= 1000 then
    return ('%.1fk'):format(n / 1000)
  end
  return tostring(n)
end

---The bar: what matters first (what waits and its keys, the running turn, a refusal), then
---`%<` and the rest; a narrow pane cuts the rest, never the first part. When what waits and
---its keys do not fit on one line, the keys go to the composer's bar (second value).
local function winbar_text(status, width)
  local mode = status.mode == 'plan' and 'plan mode' or 'normal'
  local parts =
    { 'sightline', (status.provider or '') .. (status.model and (' ' .. status.model:gsub('%%', '%%%%')) or ''), mode }
  if status.autoaccept then
    table.insert(parts, 'autoaccept')
  end
  if type(status.usage_line) == 'string' and status.usage_line ~= '' then
    table.insert(parts, status.usage_line) -- tokens and cost, computed by the core
  end
  local head = table.concat(parts, ' · ')
  local first, second
  if status.state == 'working' and S.since then
    local secs = (vim.uv.now() - S.since) / 1000
    first = ('%%#SightlineWorking#%s working %.1fs%%*'):format(SPINNER[S.frame], secs)
    local t = type(status.turn_tokens) == 'table' and status.turn_tokens or nil
    if t and ((t.input or 0) > 0 or (t.output or 0) > 0) then
      first = first .. (' · %s in · %s out'):format(count(t.input), count(t.output))
    end
  elseif status.state == 'awaiting_decision' then
    -- The review bar: what waits and the keys that decide it (a command is allowed or denied).
    local keys = require('sightline.config').get().pane.keys
    local command = status.pending_kind == 'command'
    local bar = ('%s %s · %s %s'):format(
      keys.accept,
      command and 'allow' or 'accept',
      keys.reject,
      command and 'deny' or 'reject'
    )
    if not command and keys.compare then
      bar = bar .. (' · %s compare'):format(keys.compare)
    end
    local pending = type(status.pending) == 'string' and status.pending or 'waiting'
    local line = '● ' .. pending .. ' · ' .. bar
    if vim.fn.strdisplaywidth(line) <= width then
      first = ('%%#SightlineWarning#● %s%%* · %s'):format(esc(pending), esc(bar))
    else
      first = ('%%#SightlineWarning#● %s%%*'):format(esc(fit(pending, width - 2)))
      bar = bar:gsub(' · ', '  ') -- a bar of its own: spaces separate well enough
      if vim.fn.strdisplaywidth(bar) > width and not command and keys.compare then
        bar = bar:gsub('  %S+ compare$', '') -- the compare key goes first, accept and reject stay
      end
      second = '%#SightlineWarning#' .. esc(bar) .. '%*%<'
    end
  end
  if S.notice then
    local group = S.notice.level >= vim.log.levels.ERROR and 'SightlineError' or 'SightlineWarning'
    local text = S.notice.text:gsub('\n.*', '')
    local note = ('%%#%s#✗ %s%%*'):format(group, esc(fit(text, math.max(12, width - 2))))
    if status.state == 'awaiting_decision' then
      -- What waits keeps the front; the note ends the bar (its tail survives the cut) and
      -- is whole at the end of the transcript.
      return first .. '%<' .. ' · ' .. head .. ' · ' .. note, second
    end
    first = first and (first .. ' · ' .. note) or note
  end
  if not first then
    -- Idle: the provider and model lead, so a narrow bar drops the usage tail instead.
    return head .. '%<', second
  end
  return first .. '%<' .. ' · ' .. head, second
end

render_bar = function()
  if valid_win(S.twin) then
    local width = api.nvim_win_get_width(S.twin)
    local top, keys = winbar_text(require('sightline.host').status(), width)
    vim.wo[S.twin][0].winbar = top
    if valid_win(S.cwin) and vim.wo[S.cwin][0].winbar ~= (keys or '') then
      vim.wo[S.cwin][0].winbar = keys or ''
    end
  end
end

---Called when the core's state changes: start or stop the spinner.
---@param status table the core's status
function M.on_state(status)
  if status.state == 'working' then
    S.since = S.since or vim.uv.now()
    if not S.timer then
      S.timer = vim.uv.new_timer()
      S.timer:start(
        0,
        120,
        vim.schedule_wrap(function()
          S.frame = S.frame % #SPINNER + 1
          render_bar()
        end)
      )
    end
  else
    if status.state ~= 'awaiting_decision' then
      S.since = nil
    end
    if S.timer then
      S.timer:stop()
      S.timer:close()
      S.timer = nil
    end
  end
  render_bar()
end

---The core ended on its own: say so in the pane (the host also notifies).
---@param msg string? what the host reported
function M.on_core_exit(msg)
  M.on_state({ state = 'stopped' })
  if msg then
    M.notice(msg, vim.log.levels.ERROR, { notify = false })
  end
end

return M
