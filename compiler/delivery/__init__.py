"""How artifacts reach a host: written, compared, owned, applied, and what a change costs."""
