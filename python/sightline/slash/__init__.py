"""`/` in the composer: built-in commands, prompt files and the commands other sources offer."""
