; sightline: what the C tree means to a reveal (see :help sightline-reveal-languages).
; @member is a member (its range), @member.name its name, @member.body where its
; syntax_scope steps start (the member itself when absent). @scope.<kind> is a syntax-scope
; step of that kind; @scope.none unmarks a node another pattern marked.

; Members. Declarators nest (pointer → function → identifier): one pattern per shape.
(function_definition
  declarator: (function_declarator declarator: (identifier) @member.name)) @member
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @member.name))) @member
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator declarator: (identifier) @member.name)))) @member

(field_declaration declarator: (field_identifier) @member.name) @member
(field_declaration
  declarator: [(pointer_declarator declarator: (field_identifier) @member.name)
               (array_declarator declarator: (field_identifier) @member.name)]) @member
(field_declaration
  declarator: (function_declarator
    declarator: (parenthesized_declarator
      (pointer_declarator declarator: (field_identifier) @member.name)))) @member

(type_definition declarator: (type_identifier) @member.name) @member
(type_definition
  declarator: (pointer_declarator declarator: (type_identifier) @member.name)) @member
(type_definition
  declarator: (function_declarator
    declarator: (parenthesized_declarator
      (pointer_declarator declarator: (type_identifier) @member.name)))) @member

(struct_specifier name: (_) @member.name body: (_)) @member
(union_specifier name: (_) @member.name body: (_)) @member
(enum_specifier name: (_) @member.name body: (_)) @member
(enumerator name: (_) @member.name) @member
(preproc_function_def name: (_) @member.name) @member
(preproc_def name: (_) @member.name) @member

; Syntax-scope steps.
(for_statement) @scope.for
(while_statement) @scope.while
(do_statement) @scope.while
(if_statement) @scope.if
; `else if` continues the outer if, as `elif` does in Python and `elseif` in Lua.
(else_clause (if_statement) @scope.none)
(switch_statement) @scope.switch
; Only a free-standing `{ … }`; the bodies of for/if/functions are not steps.
(compound_statement (compound_statement) @scope.block)
(case_statement (compound_statement) @scope.block)
(function_definition) @scope.function
