"""`hostc audit`: did the Plan take effect on this host?

`observe` holds the table of expectations (hostc-verify's target reads it too, so a
build loads nothing else from here), `findings` judges them on a host, `run` reads a
live root, a directory or a capture.
"""
