---@mod sightline.ui.pane.markdown  The transcript's Markdown: tree-sitter highlights, rendered as windows show them.
local M = {}
local api = vim.api
local state = require('sightline.ui.pane.state')
local folds = require('sightline.ui.pane.folds')
local S = state.S

local md_ns = api.nvim_create_namespace('sightline.markdown')
local md_view_ns = api.nvim_create_namespace('sightline.markdown.view') -- its provider's

-- Loading a language's queries parses them: ~5-20 ms each here (c's highlights, markdown's),
-- once per Neovim. Paid while a reply streams, that is a stall of the typing in any window;
-- so the pane loads the languages a reply most likely holds ahead, one per turn of the event
-- loop, when it is first made (M.register), and the rest as a reply first brings them.
local PRELOAD = { 'markdown', 'markdown_inline', 'lua', 'vim', 'vimdoc', 'query', 'c', 'python', 'bash' }
local PRELOAD_GAP_MS = 10
-- How long after the last key the next language loads (see preload_all).
local PRELOAD_QUIET_MS = 300
local queries = {} ---@type table<string, vim.treesitter.Query|false>
-- vim.treesitter.query.get keeps what it loaded in a weak cache: once no parser holds a
-- language's injections query, a collection drops it, and the next parse (a reply's
-- next delta) reads its files again. Held here, each is read once per Neovim.
local injections = {} ---@type table<string, vim.treesitter.Query|false>

---A language's highlights query, loaded once (false: none, or no parser).
---@param lang string
---@return vim.treesitter.Query|false
local function highlights(lang)
  local q = queries[lang]
  if q == nil then
    local ok, got = pcall(vim.treesitter.query.get, lang, 'highlights')
    q = ok and got or false
    queries[lang] = q
  end
  return q
end

---Load `lang`'s parser and the queries rendering it uses (its highlights; its injections,
---which parsing reads), if Neovim has a parser for it.
---@param lang string
local function preload(lang)
  if queries[lang] ~= nil then
    return
  end
  if not pcall(vim.treesitter.language.add, lang) then
    queries[lang] = false
    return
  end
  local ok, got = pcall(vim.treesitter.query.get, lang, 'injections')
  injections[lang] = ok and got or false
  highlights(lang)
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

-- `[x]`, `[x][]`, `[x][y]` and `![x]` are links only where a definition `[x]: url` names
-- them (a transcript has none); the parser reads every such pair of brackets as one and the
-- queries conceal their brackets. Left as written: `a[i]` or `[draft]` from the user or the
-- model. Inline links and images, `[x](url)`, are links by themselves.
local REFERENCE_LINKS = { shortcut_link = true, collapsed_reference_link = true, full_reference_link = true }

---@param node TSNode
---@return boolean
local function is_reference(node)
  local kind = node:type()
  if REFERENCE_LINKS[kind] then
    return true
  end
  if kind ~= 'image' then
    return false
  end
  for child in node:iter_children() do
    if child:type() == '(' then
      return false
    end
  end
  return true
end

---Whether a captured node is, or is a part of, a reference link.
---@param node TSNode
---@return boolean
local function in_reference_link(node)
  if is_reference(node) then
    return true
  end
  local parent = node:parent()
  return parent ~= nil and is_reference(parent)
end

-- Each capture's highlight group, by language and capture id: false for those never drawn
-- (`@spell`, `@nospell`, `@_name`). Built once per query, so painting allocates no names.
local groups = {} ---@type table<string, (string|false)[]>

---@param query vim.treesitter.Query
---@param lang string
---@return (string|false)[]
local function groups_of(query, lang)
  local g = groups[lang]
  if not g or g.query ~= query then
    g = { query = query }
    for id, name in ipairs(query.captures) do
      local skip = name == 'spell' or name == 'nospell' or name:sub(1, 1) == '_'
      g[id] = not skip and ('@' .. name .. '.' .. lang)
    end
    groups[lang] = g
  end
  return g
end

---Set the marks of one tree's highlight captures.
---@param buf integer the transcript
---@param first integer the span's first row (0-based)
---@param text string the span's text, as parsed
---@param tree TSTree
---@param query vim.treesitter.Query the tree's language's highlights
---@param lang string
---@param depth integer how deep the tree is injected (0: the message's own Markdown)
---@param own boolean the message's own Markdown (its markers may be concealed), not code
local function paint(buf, first, text, tree, query, lang, depth, own)
  local g = groups_of(query, lang)
  local inline = lang == 'markdown_inline'
  -- One table for every mark (nvim_buf_set_extmark copies what it reads): a reply's
  -- thousands of captures leave no garbage behind.
  local opts = { strict = false }
  for id, node, metadata in query:iter_captures(tree:root(), text, 0, -1) do
    local group = g[id]
    if group and not (inline and in_reference_link(node)) then
      local sr, sc, er, ec = node:range()
      local md = metadata[id]
      opts.end_row, opts.end_col, opts.hl_group = first + er, ec, group
      -- A query's own priority replaces the default (markdown sets 90 on code blocks so
      -- that what is inside them wins); injected trees sit above their host.
      opts.priority = (tonumber(metadata.priority or md and md.priority) or 100) + 10 * depth
      local conceal = metadata.conceal or md and md.conceal
      opts.conceal = own and conceal or nil
      opts.conceal_lines = own and (metadata.conceal_lines ~= nil or md and md.conceal_lines ~= nil) and '' or nil
      pcall(api.nvim_buf_set_extmark, buf, md_ns, first + sr, sc, opts)
    end
  end
end

-- Headings and tables, drawn as the rest is: a heading's `###` hidden (its highlight says it
-- is one), a table's pipes drawn as lines and its delimiter row as a rule. The transcript is
-- rendered here rather than by a Markdown plugin: see ensure_buffers.
local BLOCKS = [[
(atx_heading
  [(atx_h1_marker) (atx_h2_marker) (atx_h3_marker)
   (atx_h4_marker) (atx_h5_marker) (atx_h6_marker)] @marker)
(pipe_table_header "|" @pipe)
(pipe_table_row "|" @pipe)
(pipe_table_delimiter_row) @rule
]]
local blocks_query ---@type vim.treesitter.Query|false|nil
local PIPE_GROUP = '@punctuation.special.markdown'
local RULE = { ['|'] = '┼', ['-'] = '─', [':'] = '─', [' '] = '─' }

---A delimiter row (`|:---|--:|`) as a rule of the same width: `├──┼──┤`.
---@param row string the row's text
---@return string
local function rule(row)
  local out = row:gsub('.', RULE)
  out = out:gsub('^┼', '├'):gsub('┼$', '┤')
  return out
end

---Mark the headings and tables of the message's own Markdown tree.
---@param buf integer the transcript
---@param first integer the span's first row (0-based)
---@param text string the span's text, as parsed
---@param lines string[] the span's rows
---@param tree TSTree the span's markdown tree (not an injected one)
local function draw_blocks(buf, first, text, lines, tree)
  if blocks_query == nil then
    local ok, q = pcall(vim.treesitter.query.parse, 'markdown', BLOCKS)
    blocks_query = ok and q or false
  end
  if not blocks_query then
    return
  end
  for id, node in blocks_query:iter_captures(tree:root(), text, 0, -1) do
    local name = blocks_query.captures[id]
    local sr, sc, er, ec = node:range()
    local line = lines[sr + 1] or ''
    local opts = { priority = 120, strict = false }
    if name == 'marker' then
      -- The space after the marker goes with it: the title starts where the text does.
      opts.end_row, opts.end_col, opts.conceal = first + sr, line:sub(ec + 1, ec + 1) == ' ' and ec + 1 or ec, ''
    elseif name == 'pipe' then
      opts.end_row, opts.end_col, opts.conceal, opts.hl_group = first + sr, ec, '│', PIPE_GROUP
    else
      local row = line:sub(sc + 1, er == sr and ec or #line)
      opts.virt_text, opts.virt_text_pos = { { rule(row), PIPE_GROUP } }, 'overlay'
    end
    pcall(api.nvim_buf_set_extmark, buf, md_ns, first + sr, sc, opts)
  end
end

---Parse one span of Markdown rows: the rows, their text and its parser with every tree
---parsed; or, when there is nothing to paint (plain prose, a failed parse), the row the
---span's next render may start from.
---@return table|integer
local function parse_span(buf, first, last)
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
  return { first = first, lines = lines, text = text, parser = parser, resume = last_block_row(trees[1], first) }
end

---Paint a parsed span with the tree-sitter parsers Neovim ships: the highlights queries of
---markdown, markdown_inline and of every injected language that has a parser; `conceal`
---hides markers in the transcript window (conceallevel 2). Returns the row the span's next
---render may start from.
local function paint_span(buf, job)
  local first, text = job.first, job.text
  job.parser:for_each_tree(function(tree, ltree)
    local lang = ltree:lang()
    -- An injected language paints over its host (the lua in a fence over the fence's own
    -- group): trees come in no fixed order, so depth decides, not the order of painting.
    local depth, up = 0, ltree:parent()
    while up do
      depth, up = depth + 1, up:parent()
    end
    -- Only the message's own Markdown hides its markers: a code block shows its code as
    -- written, whatever its language's queries conceal (a ```markdown block included).
    local own = depth == 0 or (depth == 1 and lang == 'markdown_inline')
    if injections[lang] == nil then -- a language no preload met: its parse loaded it
      local found, got = pcall(vim.treesitter.query.get, lang, 'injections')
      injections[lang] = found and got or false
    end
    local query = highlights(lang)
    if query then
      paint(buf, first, text, tree, query, lang, depth, own)
    end
    if depth == 0 then
      draw_blocks(buf, first, text, job.lines, tree)
    end
  end)
  return job.resume
end

---Parse and paint one span of Markdown rows (see parse_span, paint_span).
local function render_markdown(buf, first, last)
  local job = parse_span(buf, first, last)
  return type(job) == 'table' and paint_span(buf, job) or job
end

-- The span a reply streams into is rendered again for each push, from the start of its last
-- block: a parse and a repaint, ~1.3 ms for a dozen rows (tree-sitter's parse of the block and
-- its injections is most of it). Pushes come up to every 14 ms (python/sightline/ui/push.py),
-- so that span is rendered at most every RENDER_MS: a fast stream costs no more Markdown work
-- than a slow one, ~15 renders a second. Its text is in the buffer at once; the rows it
-- already had keep their marks meanwhile, and only what is new waits (four frames at most)
-- for its marks.
local RENDER_MS = 66
-- Per pane (S): `md_streamed_at`, vim.uv.now() when the streamed span was last rendered;
-- `md_render_due`, a timer renders the streamed span when RENDER_MS is over.

---Pending again: span `p`, whose paint a push came before. A push whose rows reach into it
---sent it again (or the spans that replace it); one that only added rows below did not.
local function requeue(p)
  local pending = S.md_pending
  local at = #pending + 1
  for i, q in ipairs(pending) do
    if q[1] < p[2] and q[2] > p[1] then
      return
    end
    if q[1] >= p[2] then
      at = math.min(at, i)
    end
  end
  table.insert(pending, at, p)
end

local function render_span(buf, p)
  if p[3] ~= S.md_last then -- a span above the streamed one, or one scrolled into view
    api.nvim_buf_clear_namespace(buf, md_ns, p[1], p[2])
    pcall(render_markdown, buf, p[1], p[2]) -- a nicety; the text is there
    return
  end
  -- The streamed span: parsed now, painted at the loop's next turn, so that a key typed
  -- meanwhile waits for half the work at most.
  local ok, job = pcall(parse_span, buf, p[1], p[2])
  local function done(row)
    S.md_resume = { first = p[3], row = row }
    S.md_streamed_at = vim.uv.now()
  end
  if not ok or type(job) ~= 'table' then
    api.nvim_buf_clear_namespace(buf, md_ns, p[1], p[2])
    done(ok and job or p[1])
    return
  end
  local tick = api.nvim_buf_get_changedtick(buf)
  S.md_painting = true
  vim.schedule(state.bind(function()
    S.md_painting = false
    if not state.valid_buf(buf) then
      return
    end
    -- A push in between changed the buffer: the span is rendered anew (from where the last
    -- paint left its marks: md_resume is only moved by a paint).
    if api.nvim_buf_get_changedtick(buf) == tick then
      api.nvim_buf_clear_namespace(buf, md_ns, p[1], p[2])
      local pok, row = pcall(paint_span, buf, job)
      done(pok and row or p[1])
    else
      requeue(p)
    end
    if #S.md_pending > 0 then -- what came meanwhile waited for this paint
      M.render_visible(buf)
    end
  end))
end

---Whether span `p` waits for RENDER_MS to pass (a timer then renders what is in view).
local function waits(p)
  if p[3] == S.md_last and S.md_painting then
    return true -- parsed a moment ago: painted at the loop's next turn
  end
  if p[3] ~= S.md_last or not S.md_streamed_at or not S.md_resume or S.md_resume.first ~= p[3] then
    return false -- not the span rendered a moment ago: nothing to wait for
  end
  local left = S.md_streamed_at + RENDER_MS - vim.uv.now()
  if left <= 0 then
    return false
  end
  if not S.md_render_due then
    S.md_render_due = true
    vim.defer_fn(
      state.bind(function()
        S.md_render_due = false
        if state.valid_buf(S.tbuf) then
          M.render_visible(S.tbuf)
        end
      end),
      left
    )
  end
  return true
end

---Render the pending Markdown spans that rows [top, view_end) of `win` reach; with `limit`,
---at most that many, and rows `margin` view heights around the view count as in it.
---Pending spans are sorted and disjoint (a delta sends them in order, from its first row
---on), so those in reach are found by bisection: a delta costs the same whatever the
---number of spans out of view, which a long transcript opened whole leaves pending.
local function render_near(buf, win, top, margin, limit)
  local pending = S.md_pending
  if #pending == 0 then
    return 0
  end
  local bottom = folds.view_end(win, top)
  local reach = (bottom - top) * (margin or 0)
  top, bottom = top - reach, bottom + reach
  local lo, hi = 1, #pending + 1 -- the first span ending after `top`
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if pending[mid][2] <= top then
      lo = mid + 1
    else
      hi = mid
    end
  end
  local done, i = 0, lo
  while pending[i] and pending[i][1] < bottom and (not limit or done < limit) do
    local p = pending[i]
    if waits(p) then
      i = i + 1
    else
      table.remove(pending, i)
      render_span(buf, p)
      done = done + 1
    end
  end
  return done
end

local function render_pending(buf, win, top)
  render_near(buf, win, top)
end

-- Spans a few screens around the view are rendered ahead, one per turn of the event loop,
-- so that scrolling finds them ready and a key typed meanwhile waits for one span at most.
local PREFETCH_SCREENS = 2
-- S.md_prefetching: a prefetch step is scheduled for the pane.
local function prefetch()
  S.md_prefetching = false
  local buf = S.tbuf
  if not state.valid_buf(buf) or #S.md_pending == 0 then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if render_near(buf, win, vim.fn.line('w0', win) - 1, PREFETCH_SCREENS, 1) > 0 then
      S.md_prefetching = true
      vim.schedule(state.bind(prefetch))
      return
    end
  end
end

---Render ahead the Markdown around the transcript's view (on WinScrolled, after a delta).
function M.prefetch()
  if not S.md_prefetching and #S.md_pending > 0 then
    S.md_prefetching = true
    vim.schedule(state.bind(prefetch))
  end
end

---Load PRELOAD's languages (with the filetypes of the buffers listed now first: the code a
---question is about), one at a time with the loop left idle in between: a key typed meanwhile
---waits for one at most, and what waits for an idle loop (`:startinsert` taking effect)
---is not held back by the whole chain, as back-to-back vim.schedule steps would hold it.
local function preload_all()
  local langs = {}
  for _, b in ipairs(api.nvim_list_bufs()) do
    local ft = vim.bo[b].buflisted and vim.bo[b].filetype or ''
    local lang = ft ~= '' and vim.treesitter.language.get_lang(ft) or nil
    if lang then
      langs[#langs + 1] = lang
    end
  end
  vim.list_extend(langs, PRELOAD, 1, #PRELOAD)
  table.insert(langs, 1, 'markdown') -- first: every reply needs it
  -- A language's load is one piece of main-loop work of ~5-15 ms (its parser, then its
  -- queries parsed): never while the user types, whose next key would wait for it.
  local typed_at = 0
  local on_key = api.nvim_create_namespace('sightline.markdown.preload')
  vim.on_key(function()
    typed_at = vim.uv.now()
  end, on_key)
  local i = 0
  local function step()
    local quiet = typed_at + PRELOAD_QUIET_MS - vim.uv.now()
    if quiet > 0 then
      vim.defer_fn(step, quiet)
      return
    end
    i = i + 1
    if langs[i] then
      preload(langs[i])
      if langs[i] == 'markdown' and blocks_query == nil then
        local ok, q = pcall(vim.treesitter.query.parse, 'markdown', BLOCKS)
        blocks_query = ok and q or false
      end
      vim.defer_fn(step, PRELOAD_GAP_MS)
    else
      vim.on_key(nil, on_key)
    end
  end
  vim.defer_fn(step, PRELOAD_GAP_MS)
end

local registered = false
---Spans scrolled into view are rendered as the window is drawn: the provider's on_win runs
---before the window's lines are, and extmarks set there are used in that same redraw.
function M.register()
  if registered then
    return
  end
  registered = true
  -- Once Neovim is idle: the pane opening (its `:startinsert` included) goes first.
  api.nvim_create_autocmd(
    'SafeState',
    { once = true, callback = preload_all, desc = 'sightline: load the Markdown languages ahead' }
  )
  api.nvim_set_decoration_provider(md_view_ns, {
    on_win = function(_, win, buf, toprow)
      if buf == S.tbuf then
        if #S.md_pending > 0 then
          pcall(render_pending, buf, win, toprow)
        end
      else
        -- Another pane's transcript (a window of it shown beside the active pane's)? Asked
        -- of the panes' own table: this runs for every window at every redraw, a key typed
        -- or a push applied, and a buffer variable costs an API call (an error when unset).
        local id = state.of_buf(buf)
        if id and state.get(id).tbuf == buf and #state.get(id).md_pending > 0 then
          pcall(state.with, id, render_pending, buf, win, toprow)
        end
      end
      return false
    end,
  })
end

---Take a delta's Markdown spans: a span reaching into the new rows is rendered with its
---context, whole, or from the start of its last block when the previous delta rendered the
---same span (a streamed reply grows at its end; the blocks above it are final and keep
---their marks).
---@param buf integer the transcript
---@param start integer the delta's first row (0-based)
---@param spans integer[][]? the delta's Markdown spans, {first, end}
---@param kept boolean? row `start` kept its text and marks (the delta appended to it)
function M.take(buf, start, spans, kept)
  spans = spans or {}
  local resume = S.md_resume
  local froms = {}
  local resumed = nil ---@type {first: integer, row: integer}?
  for i, span in ipairs(spans) do
    froms[i] = span[1]
    if resume and resume.first == span[1] and resume.row >= span[1] and resume.row <= start then
      froms[i], resumed = resume.row, resume
    end
  end
  -- Marks on rows the delta replaced are wrong (squashed onto its first row, a hidden line
  -- among them); those above it hold until their span is rendered again (render_span).
  api.nvim_buf_clear_namespace(buf, md_ns, kept and start + 1 or start, -1)
  S.md_resume = resumed
  -- Spans are rendered when a window shows them: now for those in view, the others as they
  -- scroll into view (M.register). The delta sends again every span it reaches.
  local pending = S.md_pending
  while #pending > 0 and pending[#pending][2] > start do
    pending[#pending] = nil
  end
  for i, span in ipairs(spans) do
    pending[#pending + 1] = { froms[i], span[2], span[1] }
  end
  if #spans > 0 then
    S.md_last = spans[#spans][1]
  end
  -- Every span, for the code block keys (blocks.lua): those ending by `start` stay.
  local all = S.md_spans
  while #all > 0 and all[#all][2] > start do
    all[#all] = nil
  end
  for _, span in ipairs(spans) do
    all[#all + 1] = { span[1], span[2] }
  end
end

---Render the pending spans every window on `buf` shows, then those around them ahead.
---@param buf integer the transcript
function M.render_visible(buf)
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    render_pending(buf, win, vim.fn.line('w0', win) - 1)
  end
  M.prefetch()
end

return M
