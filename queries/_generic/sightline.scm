; sightline: the fallback for a language without queries/<lang>/sightline.scm, fitting the
; nvim-treesitter parsers' common node names. One pattern per line: the lines naming a node
; type or field the language lacks are left out. Captures as in queries/c/sightline.scm.
(function_definition name: (_) @member.name) @member
(function_declaration name: (_) @member.name) @member
(function_item name: (_) @member.name) @member
(method_definition name: (_) @member.name) @member
(method_declaration name: (_) @member.name) @member
(class_definition name: (_) @member.name) @member
(class_declaration name: (_) @member.name) @member
(class_specifier name: (_) @member.name) @member
(struct_item name: (_) @member.name) @member
(enum_item name: (_) @member.name) @member
(trait_item name: (_) @member.name) @member
(interface_declaration name: (_) @member.name) @member
(namespace_definition name: (_) @member.name) @member
(module name: (_) @member.name) @member
(decorated_definition definition: (_ name: (_) @member.name) @member.body) @member
(for_statement) @scope.for
(for_in_statement) @scope.for
(foreach_statement) @scope.for
(enhanced_for_statement) @scope.for
(for_range_loop) @scope.for
(for_expression) @scope.for
(while_statement) @scope.while
(do_statement) @scope.while
(while_expression) @scope.while
(loop_expression) @scope.while
(if_statement) @scope.if
(if_expression) @scope.if
(switch_statement) @scope.switch
(switch_expression) @scope.switch
(match_statement) @scope.switch
(match_expression) @scope.switch
(try_statement) @scope.try
(try_expression) @scope.try
(function_definition) @scope.function
(function_declaration) @scope.function
(function_item) @scope.function
(method_definition) @scope.function
(method_declaration) @scope.function
