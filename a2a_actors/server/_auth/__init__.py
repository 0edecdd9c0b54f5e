"""Who the caller is and what the server signs: API keys, bearer tokens, JWT, card signatures."""
