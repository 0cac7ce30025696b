; sightline: what the Python tree means to a reveal, when a Python parser is installed
; (without one the core's `ast` resolves Python). See queries/c/sightline.scm for the captures.

; Members; decorators belong to the def (the wider @member wins for one body).
(function_definition name: (identifier) @member.name) @member
(class_definition name: (identifier) @member.name) @member
(decorated_definition
  definition: [(function_definition name: (identifier) @member.name)
               (class_definition name: (identifier) @member.name)] @member.body) @member

; Syntax-scope steps.
(for_statement) @scope.for
(while_statement) @scope.while
(if_statement) @scope.if
(match_statement) @scope.switch
(try_statement) @scope.try
(with_statement) @scope.block
(function_definition) @scope.function
(decorated_definition definition: (function_definition)) @scope.function
