"""The command-line interface (``eviseek``)."""
