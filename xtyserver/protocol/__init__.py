"""protocol/v1: frame types, the one decoder, budgets and forbidden content (``protocol/v1.md``)."""
