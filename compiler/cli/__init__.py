"""The `hostc` command: the only package that prints or exits."""
