"""The MCP server behind `context serve`: tools in `tools`, protocol wiring in `server`.

Kept empty so that importing the package never loads the MCP SDK.
"""
