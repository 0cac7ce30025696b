; sightline: what the Lua tree means to a reveal (see queries/c/sightline.scm for the
; captures). When two patterns capture the same @member.body, the wider @member wins:
; `local x = function …` is the whole declaration, `local` included.

; Members: `function a.b:c()`, and names given a function or a table.
(function_declaration name: (_) @member.name) @member
(assignment_statement
  (variable_list . (_) @member.name .)
  (expression_list . [(function_definition) (table_constructor)] @member.body .)) @member
(variable_declaration
  (assignment_statement
    (variable_list . (_) @member.name .)
    (expression_list . [(function_definition) (table_constructor)] @member.body .))) @member
(field
  name: (_) @member.name
  value: [(function_definition) (table_constructor)] @member.body) @member

; Syntax-scope steps.
(for_statement) @scope.for
(while_statement) @scope.while
(repeat_statement) @scope.while
(if_statement) @scope.if
(do_statement) @scope.block
(function_declaration) @scope.function
(function_definition) @scope.function
