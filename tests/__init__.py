"""The test suite, in three layers:

  tests/unit   pytest without Neovim (starting one fails the test): domain rules, the
               agent's turns against tests/fake_editor.py, providers against the loopback
               servers, the layer order (test_package_layers.py), the help and README
               (test_docs.py), rules over the source text (test_source_rules.py)
  tests/nvim   a child Neovim per test, configured as the README says (tests/child.py),
               typed into with a UI attached (tests/screen.py)
  tests/lua    the Lua those tests run in a child (readers, fakes, fuzz programs), called
               with tests/lua_helper.py

Test files are named after the room they test, so `grep -rl <module> tests/` finds them:
  python/sightline/domain, editor      test_diff, test_history*, test_workspace, test_port*
  python/sightline/agent, gate, tools  test_compaction, test_thinking, test_review*,
                                       test_change_*, test_tools_*, test_plan, test_command
  python/sightline/providers           test_provider, test_openai*, test_acp*
  python/sightline/mcp_client          test_mcp_client*
  python/sightline/mentions, ui        test_mentions*, test_completion, test_chips,
                                       test_pane_transcript
  python/sightline/entry               test_fuzz_rpc, test_cli*, test_mcp, test_rplugin
  lua/sightline/ui/pane/*, receive     test_pane*, test_thinking, test_messages
  lua/sightline/complete, reveal,      test_complete_nvim, test_reveal*, test_resolve,
  resolve, port                        test_port_unique, test_scope_anchor, test_focus

The modules here are what both layers and the benches (bench_*.py, `make bench`) share: the
child starter, the screen, the loopback Messages API (fakeapi.py) and its OpenAI and Gemini
counterparts, the scripted ACP agent (acp_agent.py), the MCP servers (mcp_servers/), the
fake editor and strategies."""
