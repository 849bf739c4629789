"""The hardware model hostc compiles against, and the snapshot file that carries it."""
