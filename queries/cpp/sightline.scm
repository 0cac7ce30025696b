; inherits: c
; sightline: C++ is C plus these (see queries/c/sightline.scm for the captures).

(class_specifier name: (_) @member.name body: (_)) @member
(namespace_definition name: (_) @member.name) @member
(function_definition
  declarator: (function_declarator
    declarator: [(field_identifier) (qualified_identifier)] @member.name)) @member

(try_statement) @scope.try
(for_range_loop) @scope.for
