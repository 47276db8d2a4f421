"""Memory management outside the game: the memory page's HTTP and access rules,
the page's files (``ui/``) and the MCP server.
"""
