"""The editor port: the one typed surface through which the core touches Neovim.

It mirrors lua/sightline/port.lua method for method."""
