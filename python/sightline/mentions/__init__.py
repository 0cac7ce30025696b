"""The mentions feature: `@ext:`, `@path`, `@buffer`, `@diagnostics`, `@mcp:`: parsing,
completion in the composer, and the context they add for the model."""
