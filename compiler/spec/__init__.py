"""node.toml: what the operator asks for.  Shape here; meaning is checked in `hostc.check`."""
